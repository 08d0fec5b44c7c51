// Power and migration actions: PUTs to KubeVirt's subresources, as virtctl sends them. The
// server decides whether an action applies now; a refusal is shown with its message.

import { APIError, paths, request } from "./api.js";
import { h } from "./dom.js";

/** vmActions are the VirtualMachine's subresources (virtualmachines/NAME/ACTION). */
export const vmActions = [
  { action: "start", label: "Start" },
  { action: "stop", label: "Stop" },
  { action: "restart", label: "Restart" },
  { action: "migrate", label: "Migrate" },
];

/** vmiActions are the VirtualMachineInstance's (virtualmachineinstances/NAME/ACTION). */
export const vmiActions = [
  { action: "pause", label: "Pause" },
  { action: "unpause", label: "Unpause" },
  { action: "softreboot", label: "Soft reboot" },
  { action: "migrate", label: "Migrate" },
];

/** runAction PUTs the action and reports the outcome through say(text, kind). */
export async function runAction(ns, resource, name, action, label, say) {
  const kind = resource === "virtualmachines" ? "VM" : "VMI";
  say(`${label} ${kind} ${name}: sending…`, "info");
  try {
    await request("PUT", paths.subresource(ns, resource, name, action), {});
    say(`${label} ${kind} ${name}: accepted.`, "ok");
  } catch (err) {
    const why = err instanceof APIError ? err.describe() : String(err);
    say(`${label} ${kind} ${name}: ${why}`, "error");
  }
}

/**
 * actionButtons are one button per action of resource (virtualmachines or
 * virtualmachineinstances) for object name, each with an accessible name that says which
 * object it acts on.
 */
export function actionButtons(ns, resource, name, say) {
  const list = resource === "virtualmachines" ? vmActions : vmiActions;
  const kind = resource === "virtualmachines" ? "VM" : "VMI";
  return h("span", { class: "actions" }, list.map(({ action, label }) => {
    const button = h("button", {
      type: "button",
      "data-action": action,
      "aria-label": `${label} ${kind} ${name}`,
      onclick: async () => {
        button.disabled = true;
        try {
          await runAction(ns, resource, name, action, label, say);
        } finally {
          button.disabled = false;
        }
      },
    }, label);
    return button;
  }));
}
