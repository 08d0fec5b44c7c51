// What the tables show of VMs and VMIs: pure functions of the objects, tested with node:test.

/** age is kubectl's short age of an RFC 3339 timestamp at now (ms): 42s, 5m, 3h, 2d. */
export function age(timestamp, now = Date.now()) {
  if (!timestamp) return "";
  const s = Math.max(0, Math.floor((now - Date.parse(timestamp)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 2 * 3600) return `${Math.floor(s / 60)}m`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** condition is the condition of type in obj's status, or undefined. */
export function condition(obj, type) {
  return (obj?.status?.conditions || []).find((c) => c.type === type);
}

/** vmiReady says "True", "False" or "" from the VMI's Ready condition. */
export function vmiReady(vmi) {
  return condition(vmi, "Ready")?.status || "";
}

/** vmiIPs are the VMI's interfaces' addresses, comma-separated. */
export function vmiIPs(vmi) {
  const ips = [];
  for (const iface of vmi?.status?.interfaces || []) {
    if (iface.ipAddress && !ips.includes(iface.ipAddress)) ips.push(iface.ipAddress);
  }
  return ips.join(", ");
}

/** vmStatus is the VM's printable status (Stopped, Starting, Running, ...). */
export function vmStatus(vm) {
  return vm?.status?.printableStatus || (vm?.status?.created ? "Created" : "Stopped");
}

/** runStrategy is the VM's run strategy, from spec.runStrategy or the deprecated spec.running. */
export function runStrategy(vm) {
  if (vm?.spec?.runStrategy) return vm.spec.runStrategy;
  if (vm?.spec?.running === true) return "Always";
  if (vm?.spec?.running === false) return "Halted";
  return "";
}

/** vmiPhase is the VMI's phase, with "(paused)" when its Paused condition is true. */
export function vmiPhase(vmi) {
  const phase = vmi?.status?.phase || "Pending";
  return condition(vmi, "Paused")?.status === "True" ? `${phase} (paused)` : phase;
}

/** volumeSource names a volume's kind and what it points at: "dataVolume foo". */
export function volumeSource(volume) {
  for (const [kind, src] of Object.entries(volume || {})) {
    if (kind === "name") continue;
    const target = src?.name || src?.claimName || src?.image || src?.secretName || src?.volumeName || "";
    return target ? `${kind} ${target}` : kind;
  }
  return "";
}

/** diskBus is a disk's device kind and bus: "disk virtio", "cdrom sata". */
export function diskBus(disk) {
  for (const kind of ["disk", "cdrom", "lun"]) {
    if (disk && kind in disk) return `${kind} ${disk[kind]?.bus || ""}`.trim();
  }
  return "disk";
}

/** sortByName sorts objects by metadata.name. */
export function sortByName(objects) {
  return [...objects].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}
