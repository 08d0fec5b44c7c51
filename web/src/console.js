// The serial console: xterm.js over the VMI's console websocket (KubeVirt's plain.kubevirt.io
// subprotocol: binary frames carrying the guest's bytes both ways). A dropped socket is
// reconnected with backoff, keeping the terminal and its scrollback; the node agent's pings keep
// an idle session open through proxies (browsers answer them). A session another client took
// over is not taken back without the user asking.

import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import { explainStreamFailure, paths } from "./api.js";
import { h, replace, statusRegion } from "./dom.js";
import { StreamRetry, wsURL } from "./stream.js";
import { theme } from "./theme.js";

const subprotocol = "plain.kubevirt.io";

/** consolePage renders VMI name's serial console into main; it returns its cleanup. */
export function consolePage(main, ns, name) {
  const status = statusRegion();
  const screen = h("div", { class: "terminal", id: "terminal" });
  const term = new Terminal({
    cursorBlink: true,
    scrollback: 5000,
    fontFamily: "ui-monospace, 'DejaVu Sans Mono', 'Liberation Mono', monospace",
    fontSize: 15,
    theme,
    // The guest is a serial line: Alt sends ESC-prefixed keys, as a terminal emulator does.
    altClickMovesCursor: false,
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  const path = paths.subresource(ns, "virtualmachineinstances", name, "console");
  const session = new ConsoleSession(path, term, status, screen);
  const copy = () => copySelection(term, status);
  const paste = () => pasteClipboard(term, status);
  replace(main,
    h("h1", {}, "Serial console of ", h("span", {}, name)),
    h("div", { class: "toolbar" },
      h("button", { type: "button", id: "reconnect", onclick: () => session.connectNow() }, "Reconnect"),
      h("button", { type: "button", onclick: copy, title: "Ctrl+Shift+C" }, "Copy selection"),
      h("button", { type: "button", onclick: paste, title: "Ctrl+Shift+V" }, "Paste"),
      h("button", { type: "button", onclick: () => session.send("\x03") }, "Send Ctrl-C"),
      h("button", { type: "button", onclick: () => term.clear() }, "Clear scrollback")),
    status.el,
    h("p", { class: "hint", id: "terminal-hint" }, "Keys, Tab and Esc included, go to the guest. Ctrl+Shift+C copies the selection, Ctrl+Shift+V pastes, Ctrl+Shift+X leaves the terminal for the toolbar."),
    screen);
  term.open(screen);
  term.attachCustomKeyEventHandler((e) => {
    if (e.type === "keydown" && e.ctrlKey && e.shiftKey && (e.code === "KeyC" || e.key === "C")) {
      copy();
      return false;
    }
    // Ctrl+Shift+V: the browser's own paste event, which xterm.js turns into input.
    if (e.ctrlKey && e.shiftKey && (e.code === "KeyV" || e.key === "V")) return false;
    // A way out of the terminal for keyboard users (it takes Tab for the guest).
    if (e.type === "keydown" && e.ctrlKey && e.shiftKey && (e.code === "KeyX" || e.key === "X")) {
      main.querySelector("#reconnect").focus();
      return false;
    }
    return true;
  });
  const resize = () => fit.fit();
  window.addEventListener("resize", resize);
  resize();
  term.focus();
  session.connect();
  return () => {
    window.removeEventListener("resize", resize);
    session.dispose();
    term.dispose();
  };
}

/** ConsoleSession is one VMI console connection at a time, reconnected when it drops. */
class ConsoleSession {
  constructor(path, term, status, screen) {
    this.path = path;
    this.term = term;
    this.status = status;
    this.screen = screen;
    this.ws = null;
    this.encoder = new TextEncoder();
    this.retry = new StreamRetry(() => this.connect(), status);
    // xterm.js hands over what the keyboard and IME composed (any layout) as a string.
    term.onData((data) => this.send(data));
    term.onBinary((data) => this.sendBytes(Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff)));
  }

  connect() {
    this.retry.cancel();
    if (this.ws) this.ws.close(1000);
    const ws = new WebSocket(wsURL(this.path), [subprotocol]);
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    let opened = false;
    this.setState("connecting");
    this.status.say("Connecting…");
    ws.onopen = () => {
      opened = true;
      this.retry.reset();
      this.setState("connected");
      this.status.say("Connected. Press Enter if the guest shows no prompt.", "ok");
    };
    ws.onmessage = (e) => {
      this.term.write(typeof e.data === "string" ? e.data : new Uint8Array(e.data));
    };
    ws.onclose = async (e) => {
      if (this.ws !== ws || this.disposed) return;
      this.ws = null;
      this.setState("disconnected");
      if (!opened) {
        const refusal = await explainStreamFailure(this.path);
        if (this.disposed || this.ws) return;
        this.retry.failed(refusal, "The console could not be opened");
        return;
      }
      this.retry.dropped(e, "The console");
    };
  }

  connectNow() {
    this.retry.reset();
    this.connect();
  }

  setState(state) {
    this.screen.dataset.state = state;
  }

  send(text) {
    this.sendBytes(this.encoder.encode(text));
  }

  sendBytes(bytes) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(bytes);
  }

  dispose() {
    this.disposed = true;
    this.retry.cancel();
    if (this.ws) this.ws.close(1000);
  }
}

async function copySelection(term, status) {
  const text = term.getSelection();
  if (!text) {
    status.say("Nothing is selected: select text in the terminal first.", "warn");
    return;
  }
  try {
    await navigator.clipboard.writeText(text);
    status.say(`Copied ${text.length} characters.`, "ok");
  } catch (err) {
    status.say(`The browser refused the clipboard: ${err.message}`, "error");
  }
}

async function pasteClipboard(term, status) {
  try {
    const text = await navigator.clipboard.readText();
    term.paste(text);
    term.focus();
  } catch (err) {
    status.say(`The browser refused to read the clipboard (${err.message}): use Ctrl+Shift+V in the terminal.`, "error");
  }
}
