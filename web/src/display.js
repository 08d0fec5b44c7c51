// The VNC display: noVNC's RFB over the VMI's vnc websocket (plain.kubevirt.io, the RFB bytes
// in binary frames). Every page asks for Vireo's shared viewer (vnc?shared=true), so several
// pages, and the VMI's own VNC session, show one display at once without replacing each other.
// A dropped session is opened again with backoff; the toolbar scales the display to the window
// and sends key combinations the browser would keep for itself.

import RFB from "@novnc/novnc";
import { explainStreamFailure, paths } from "./api.js";
import { h, replace, statusRegion } from "./dom.js";
import { StreamRetry, wsURL } from "./stream.js";

const subprotocol = "plain.kubevirt.io";

// X11 keysyms and the key codes noVNC sends beside them.
const K = {
  ctrl: [0xffe3, "ControlLeft"], alt: [0xffe9, "AltLeft"], shift: [0xffe1, "ShiftLeft"],
  super: [0xffeb, "MetaLeft"], del: [0xffff, "Delete"], backspace: [0xff08, "Backspace"],
  tab: [0xff09, "Tab"], esc: [0xff1b, "Escape"], print: [0xff61, "PrintScreen"],
};
const fkey = (n) => [0xffbe + n - 1, `F${n}`];

/** combos are the key combinations of the toolbar's menu: pressed in order, released in reverse. */
export const combos = [
  { label: "Ctrl+Alt+Del", keys: [K.ctrl, K.alt, K.del] },
  { label: "Ctrl+Alt+Backspace", keys: [K.ctrl, K.alt, K.backspace] },
  ...[1, 2, 3, 4, 5, 6, 7].map((n) => ({ label: `Ctrl+Alt+F${n}`, keys: [K.ctrl, K.alt, fkey(n)] })),
  { label: "Alt+Tab", keys: [K.alt, K.tab] },
  { label: "Alt+F4", keys: [K.alt, fkey(4)] },
  { label: "Ctrl+Esc", keys: [K.ctrl, K.esc] },
  { label: "Super (Windows key)", keys: [K.super] },
  { label: "Print Screen", keys: [K.print] },
  { label: "Ctrl+Shift+Esc", keys: [K.ctrl, K.shift, K.esc] },
];

/** displayPage renders VMI name's display into main; it returns its cleanup. */
export function displayPage(main, ns, name) {
  const status = statusRegion();
  // An application: keys typed there go to the guest, not to a screen reader's shortcuts.
  const screen = h("div", { class: "vnc-screen", id: "vnc", role: "application", "aria-label": `Display of VMI ${name}` });
  const path = paths.subresource(ns, "virtualmachineinstances", name, "vnc") + "?shared=true";
  const view = new DisplaySession(path, screen, status);
  const scale = h("input", { type: "checkbox", id: "vnc-scale", checked: true,
    onchange: () => view.setScale(scale.checked) });
  const comboSelect = h("select", { id: "vnc-combo" }, combos.map((c, i) => h("option", { value: String(i) }, c.label)));
  replace(main,
    h("h1", {}, "Display of ", h("span", {}, name)),
    h("div", { class: "toolbar" },
      h("button", { type: "button", id: "reconnect", onclick: () => view.connectNow() }, "Reconnect"),
      h("button", { type: "button", id: "send-cad", onclick: () => view.sendCombo(combos[0]) }, "Send Ctrl-Alt-Del"),
      h("label", { for: "vnc-combo" }, "Keys"), comboSelect,
      h("button", { type: "button", onclick: () => view.sendCombo(combos[Number(comboSelect.value)]) }, "Send keys"),
      h("label", { class: "check" }, scale, " Scale to window")),
    status.el,
    screen);
  view.connect();
  return () => view.dispose();
}

/** DisplaySession is one RFB viewer at a time (noVNC's RFB cannot reconnect itself). */
class DisplaySession {
  constructor(path, screen, status) {
    this.path = path;
    this.screen = screen;
    this.status = status;
    this.rfb = null;
    this.scale = true;
    this.retry = new StreamRetry(() => this.connect(), status);
  }

  connect() {
    this.retry.cancel();
    this.close();
    let connected = false;
    this.screen.dataset.state = "connecting";
    this.status.say("Connecting…");
    const rfb = new RFB(this.screen, wsURL(this.path), { shared: true, wsProtocols: [subprotocol] });
    rfb.scaleViewport = this.scale;
    rfb.resizeSession = false;
    rfb.focusOnClick = true;
    rfb.addEventListener("connect", () => {
      connected = true;
      this.retry.reset();
      this.screen.dataset.state = "connected";
      this.status.say("Connected (shared: other viewers stay connected).", "ok");
    });
    rfb.addEventListener("desktopname", (e) => { this.screen.dataset.desktop = e.detail.name; });
    rfb.addEventListener("securityfailure", (e) => {
      this.status.say(`The display refused the connection: ${e.detail.reason || e.detail.status}`, "error");
    });
    rfb.addEventListener("disconnect", async () => {
      if (this.rfb !== rfb || this.disposed) return;
      this.rfb = null;
      this.screen.dataset.state = "disconnected";
      if (!connected) {
        const refusal = await explainStreamFailure(this.path);
        if (this.disposed || this.rfb) return;
        this.retry.failed(refusal, "The display could not be opened");
        return;
      }
      this.retry.dropped({ code: "", reason: "" }, "The display");
    });
    this.rfb = rfb;
  }

  connectNow() {
    this.retry.reset();
    this.connect();
  }

  setScale(on) {
    this.scale = on;
    if (this.rfb) this.rfb.scaleViewport = on;
  }

  sendCombo(combo) {
    if (!this.rfb) {
      this.status.say("Not connected: the keys were not sent.", "warn");
      return;
    }
    if (combo === combos[0]) {
      this.rfb.sendCtrlAltDel();
    } else {
      for (const [sym, code] of combo.keys) this.rfb.sendKey(sym, code, true);
      for (const [sym, code] of [...combo.keys].reverse()) this.rfb.sendKey(sym, code, false);
    }
    this.status.say(`Sent ${combo.label}.`, "ok");
    this.rfb.focus();
  }

  close() {
    const rfb = this.rfb;
    this.rfb = null;
    if (rfb) rfb.disconnect();
  }

  dispose() {
    this.disposed = true;
    this.retry.cancel();
    this.close();
  }
}
