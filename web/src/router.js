// Hash routes, so every page of the console is index.html and the server needs no routes:
//   #/                          namespaces
//   #/ns/NS                     the namespace's VMs and VMIs
//   #/ns/NS/vm/NAME             a VM's details     #/ns/NS/vmi/NAME           a VMI's details
//   #/ns/NS/vmi/NAME/console    serial console     #/ns/NS/vmi/NAME/display   VNC display

/** href is the link to a route made of segments (each encoded). */
export function href(...segments) {
  return "#/" + segments.map(encodeURIComponent).join("/");
}

/** parse turns a location hash into { page, ns, kind, name }. */
export function parse(hash) {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(safeDecode);
  if (parts[0] !== "ns" || !parts[1]) return { page: "namespaces" };
  const ns = parts[1];
  if (parts.length === 2) return { page: "namespace", ns };
  const kind = parts[2];
  const name = parts[3];
  if ((kind !== "vm" && kind !== "vmi") || !name) return { page: "namespace", ns };
  if (kind === "vmi" && parts[4] === "console") return { page: "console", ns, name };
  if (kind === "vmi" && parts[4] === "display") return { page: "display", ns, name };
  return { page: "detail", ns, kind, name };
}

function safeDecode(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
