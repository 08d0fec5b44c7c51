// The namespace page: its VMs and VMIs in two tables, kept live by watches. Rows are updated
// in place (keyed by name), so a focused button keeps its focus while the data around it changes.

import { paths } from "./api.js";
import { actionButtons } from "./actions.js";
import { h, replace, statusRegion, table } from "./dom.js";
import { age, runStrategy, sortByName, vmiIPs, vmiPhase, vmiReady, vmStatus } from "./format.js";
import { href } from "./router.js";
import { Collection } from "./watch.js";

/** namespacePage renders namespace ns into main; it returns the page's cleanup. */
export function namespacePage(main, ns) {
  const actionStatus = statusRegion("status action-status");
  const vms = table("Virtual machines", ["Name", "Status", "Run strategy", "Ready", "Age", "Actions"]);
  const vmis = table("Virtual machine instances", ["Name", "Phase", "Node", "IP", "Ready", "Age", "Actions"]);
  vms.el.id = "vms";
  vmis.el.id = "vmis";
  const vmState = statusRegion();
  const vmiState = statusRegion();
  replace(main,
    h("h1", {}, "Namespace ", h("span", { class: "ns-name" }, ns)),
    actionStatus.el,
    h("section", { "aria-labelledby": "vms-h" }, h("h2", { id: "vms-h" }, "Virtual machines"), vmState.el, vms.el),
    h("section", { "aria-labelledby": "vmis-h" }, h("h2", { id: "vmis-h" }, "Virtual machine instances"), vmiState.el, vmis.el));

  const vmRows = new Map();
  const vmiRows = new Map();
  const vmWatch = new Collection(paths.vms(ns), {
    onChange: (objects, state) => {
      sync(vms.tbody, vmRows, objects, (vm) => vmCells(ns, vm), (vm) => actionButtons(ns, "virtualmachines", vm.metadata.name, actionStatus.say));
      summarize(vmState, objects, state, "virtual machines");
    },
  });
  const vmiWatch = new Collection(paths.vmis(ns), {
    onChange: (objects, state) => {
      sync(vmis.tbody, vmiRows, objects, (vmi) => vmiCells(ns, vmi), (vmi) => vmiActionCell(ns, vmi, actionStatus.say));
      summarize(vmiState, objects, state, "virtual machine instances");
    },
  });
  // Ages move on without events.
  const ticker = setInterval(() => {
    for (const [rows, objects] of [[vmRows, vmWatch.objects], [vmiRows, vmiWatch.objects]]) {
      for (const [name, row] of rows) {
        const obj = objects.get(name);
        if (obj) row.querySelector("[data-col=age]").textContent = age(obj.metadata.creationTimestamp);
      }
    }
  }, 5000);
  return () => {
    vmWatch.stop();
    vmiWatch.stop();
    clearInterval(ticker);
  };
}

function summarize(region, objects, state, what) {
  if (state) region.say(state, state.startsWith("Refused") ? "error" : "warn");
  else region.say(`${objects.size} ${what}, live.`, "ok");
}

/**
 * sync makes tbody's rows those of objects, sorted by name: cells(obj) gives the data cells,
 * actions(obj) the last cell's content, built once per row so its buttons keep focus.
 */
function sync(tbody, rows, objects, cells, actions) {
  for (const [name, row] of rows) {
    if (!objects.has(name)) {
      row.remove();
      rows.delete(name);
    }
  }
  for (const obj of sortByName(objects.values())) {
    const name = obj.metadata.name;
    let row = rows.get(name);
    if (!row) {
      row = h("tr", { "data-name": name }, h("td", { class: "row-actions" }, actions(obj)));
      rows.set(name, row);
    }
    const actionCell = row.lastElementChild;
    replace(row, cells(obj), actionCell);
    tbody.appendChild(row); // moves it into sorted order
  }
}

function cell(col, ...content) {
  return h("td", { "data-col": col }, ...content);
}

function vmCells(ns, vm) {
  const name = vm.metadata.name;
  return [
    h("th", { scope: "row", "data-col": "name" }, h("a", { href: href("ns", ns, "vm", name) }, name)),
    cell("status", vmStatus(vm)),
    cell("strategy", runStrategy(vm)),
    cell("ready", vm.status?.ready ? "True" : "False"),
    cell("age", age(vm.metadata.creationTimestamp)),
  ];
}

function vmiCells(ns, vmi) {
  const name = vmi.metadata.name;
  return [
    h("th", { scope: "row", "data-col": "name" }, h("a", { href: href("ns", ns, "vmi", name) }, name)),
    cell("phase", vmiPhase(vmi)),
    cell("node", vmi.status?.nodeName || ""),
    cell("ip", vmiIPs(vmi)),
    cell("ready", vmiReady(vmi)),
    cell("age", age(vmi.metadata.creationTimestamp)),
  ];
}

function vmiActionCell(ns, vmi, say) {
  const name = vmi.metadata.name;
  return [
    h("a", { class: "button", href: href("ns", ns, "vmi", name, "console"), "aria-label": `Serial console of VMI ${name}` }, "Console"),
    h("a", { class: "button", href: href("ns", ns, "vmi", name, "display"), "aria-label": `Display (VNC) of VMI ${name}` }, "Display"),
    actionButtons(ns, "virtualmachineinstances", name, say),
  ];
}
