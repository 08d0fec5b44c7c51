// A VM's or VMI's details: status, actions, conditions (the VM's and its VMI's), disks and
// volumes, the DataVolumes they import (with progress) and the events of the object and its
// launcher Pod, all live.

import { paths } from "./api.js";
import { actionButtons } from "./actions.js";
import { h, replace, statusRegion, table } from "./dom.js";
import { age, diskBus, runStrategy, vmiIPs, vmiPhase, vmiReady, vmStatus, volumeSource } from "./format.js";
import { href } from "./router.js";
import { Collection } from "./watch.js";

/** detailPage renders the VM or VMI (kind "vm" or "vmi") name of ns; it returns its cleanup. */
export function detailPage(main, ns, kind, name) {
  const actionStatus = statusRegion("status action-status");
  const liveStatus = statusRegion();
  const summary = h("dl", { class: "summary" });
  const conditions = table("Conditions", ["Object", "Type", "Status", "Reason", "Message", "Changed"]);
  const disks = table("Disks and volumes", ["Name", "Device", "Volume", "Import"]);
  const events = table("Events", ["Last seen", "Type", "Object", "Reason", "Message"]);
  conditions.el.id = "conditions";
  disks.el.id = "disks";
  events.el.id = "events";
  const actions = [];
  if (kind === "vm") actions.push(actionButtons(ns, "virtualmachines", name, actionStatus.say));
  actions.push(actionButtons(ns, "virtualmachineinstances", name, actionStatus.say));
  replace(main,
    h("h1", {}, kind === "vm" ? "Virtual machine " : "Virtual machine instance ", h("span", {}, name)),
    liveStatus.el,
    h("div", { class: "toolbar" },
      h("a", { class: "button", href: href("ns", ns, "vmi", name, "console") }, "Serial console"),
      h("a", { class: "button", href: href("ns", ns, "vmi", name, "display") }, "Display (VNC)"),
      actions),
    actionStatus.el,
    summary,
    h("section", {}, h("h2", {}, "Conditions"), conditions.el),
    h("section", {}, h("h2", {}, "Disks and volumes"), disks.el),
    h("section", {}, h("h2", {}, "Events"), events.el));

  const state = { vm: null, vmi: null, dvs: new Map(), events: new Map(), podEvents: new Map() };
  const render = () => {
    renderSummary(summary, kind, state);
    renderConditions(conditions.tbody, state);
    renderDisks(disks.tbody, kind, state);
    renderEvents(events.tbody, [...state.events.values(), ...launcherEvents(state.podEvents, name)]);
  };
  const byName = `metadata.name=${name}`;
  const watches = [
    new Collection(paths.vmis(ns), { fieldSelector: byName, onChange: (objs, s) => {
      state.vmi = objs.get(name) || null;
      report(liveStatus, s, kind === "vmi" && !state.vmi ? "This VMI does not exist (any more)." : "");
      render();
    } }),
    new Collection(paths.dataVolumes(ns), { onChange: (objs) => { state.dvs = objs; render(); } }),
    new Collection(paths.events(ns), { fieldSelector: `involvedObject.name=${name}`, onChange: (objs) => {
      state.events = objs;
      render();
    } }),
    // The kubelet's and the scheduler's events are about the VMI's launcher Pod.
    new Collection(paths.events(ns), { fieldSelector: "involvedObject.kind=Pod", onChange: (objs) => {
      state.podEvents = objs;
      render();
    } }),
  ];
  if (kind === "vm") {
    watches.push(new Collection(paths.vms(ns), { fieldSelector: byName, onChange: (objs, s) => {
      state.vm = objs.get(name) || null;
      report(liveStatus, s, state.vm ? "" : "This VM does not exist (any more).");
      render();
    } }));
  }
  return () => watches.forEach((w) => w.stop());
}

function report(region, state, missing) {
  if (state) region.say(state, state.startsWith("Refused") ? "error" : "warn");
  else if (missing) region.say(missing, "warn");
  else region.say("Live.", "ok");
}

function renderSummary(dl, kind, { vm, vmi }) {
  const rows = [];
  if (kind === "vm" && vm) {
    rows.push(["Status", vmStatus(vm)], ["Run strategy", runStrategy(vm)], ["Created", age(vm.metadata.creationTimestamp)]);
  }
  if (vmi) {
    rows.push(["Phase", vmiPhase(vmi)], ["Node", vmi.status?.nodeName || ""], ["IP", vmiIPs(vmi)],
      ["Ready", vmiReady(vmi)], ["Instance age", age(vmi.metadata.creationTimestamp)]);
  } else {
    rows.push(["Instance", "none (not running)"]);
  }
  replace(dl, rows.map(([k, v]) => [h("dt", {}, k), h("dd", { "data-field": k.toLowerCase() }, v || "—")]));
}

function renderConditions(tbody, { vm, vmi }) {
  const rows = [];
  for (const [label, obj] of [["VM", vm], ["VMI", vmi]]) {
    for (const c of obj?.status?.conditions || []) {
      rows.push(h("tr", {}, h("td", {}, label), h("th", { scope: "row" }, c.type), h("td", {}, c.status),
        h("td", {}, c.reason || ""), h("td", {}, c.message || ""), h("td", {}, age(c.lastTransitionTime))));
    }
  }
  replace(tbody, rows.length ? rows : emptyRow(6, "No conditions."));
}

/** renderDisks lists the spec's disks with their volumes, and the DataVolumes they use. */
function renderDisks(tbody, kind, { vm, vmi, dvs }) {
  const spec = kind === "vm" ? vm?.spec?.template?.spec : vmi?.spec;
  const volumes = new Map((spec?.volumes || []).map((v) => [v.name, v]));
  const disks = spec?.domain?.devices?.disks || [];
  const rows = [];
  const seen = new Set();
  for (const disk of disks) {
    seen.add(disk.name);
    rows.push(diskRow(disk.name, diskBus(disk), volumes.get(disk.name), dvs));
  }
  for (const [name, volume] of volumes) {
    if (!seen.has(name)) rows.push(diskRow(name, "(no disk: disk virtio by default)", volume, dvs));
  }
  replace(tbody, rows.length ? rows : emptyRow(4, "No disks."));
}

function diskRow(name, device, volume, dvs) {
  const dvName = volume?.dataVolume?.name || volume?.persistentVolumeClaim?.claimName;
  const dv = dvName ? dvs.get(dvName) : undefined;
  return h("tr", { "data-disk": name },
    h("th", { scope: "row" }, name), h("td", {}, device), h("td", {}, volume ? volumeSource(volume) : "(none)"),
    h("td", {}, dv ? importProgress(dv) : ""));
}

/** importProgress is a DataVolume's phase and progress ("ImportInProgress 45.5%"), with a bar. */
function importProgress(dv) {
  const phase = dv.status?.phase || "Pending";
  const progress = dv.status?.progress || "";
  const pct = Number.parseFloat(progress);
  const bar = Number.isFinite(pct)
    ? h("progress", { max: "100", value: String(pct), "aria-label": `Import of ${dv.metadata.name}` }, progress)
    : null;
  return [h("span", { "data-dv": dv.metadata.name }, `DataVolume ${dv.metadata.name}: ${phase}${progress ? " " + progress : ""}`), " ", bar];
}

/** launcherEvents are the events of the launcher Pods of VMI name (virt-launcher-NAME-xxxxx). */
function launcherEvents(podEvents, name) {
  const prefix = `virt-launcher-${name}-`;
  return [...podEvents.values()].filter((e) => {
    const pod = e.involvedObject?.name || "";
    return pod.startsWith(prefix) && /^[a-z0-9]{5}$/.test(pod.slice(prefix.length));
  });
}

function renderEvents(tbody, events) {
  const sorted = [...events].sort((a, b) => eventTime(b) - eventTime(a));
  replace(tbody, sorted.length ? sorted.map((e) => h("tr", {},
    h("td", {}, age(e.lastTimestamp || e.eventTime || e.metadata.creationTimestamp)),
    h("td", {}, e.type || ""),
    h("td", {}, `${e.involvedObject?.kind || ""} ${e.involvedObject?.name || ""}`),
    h("th", { scope: "row" }, e.reason || ""),
    h("td", {}, e.message || ""))) : emptyRow(5, "No events."));
}

function eventTime(e) {
  return Date.parse(e.lastTimestamp || e.eventTime || e.metadata.creationTimestamp) || 0;
}

function emptyRow(columns, text) {
  return h("tr", {}, h("td", { colspan: String(columns), class: "empty" }, text));
}
