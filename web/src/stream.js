// What the console and the display share: the websocket URL of a subresource, and when to
// connect again after a refusal or a drop.

const maxBackoffMs = 15000;

/** wsURL is the websocket URL of an API path on this page's server. */
export function wsURL(path) {
  return `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${path}`;
}

/**
 * takenOver says whether a close reason is the node agent's "another client took this session"
 * (nodeagentapi.CloseTakenOver, CloseVNCReplaced): connecting again would take it back, so the
 * page waits for the user.
 */
export function takenOver(reason) {
  return /taken over|replaced/i.test(reason || "");
}

/**
 * StreamRetry schedules connect() again after a drop or a refusal, with backoff, and says so
 * in status. Refusals that waiting cannot mend (401, 403) and takeovers wait for the user. A
 * VMI that does not exist (404) or does not run (409) is waited for: a VM's restart deletes its
 * VMI and makes a new one, and a VM being started has none yet.
 */
export class StreamRetry {
  constructor(connect, status) {
    this.connect = connect;
    this.status = status;
    this.backoff = 1000;
    this.timer = null;
  }

  reset() {
    this.backoff = 1000;
    this.cancel();
  }

  cancel() {
    clearTimeout(this.timer);
    this.timer = null;
  }

  /** failed: the websocket never opened; refusal is the server's answer (or null). */
  failed(refusal, what) {
    if (refusal && [401, 403].includes(refusal.status)) {
      this.status.say(`${what}. ${refusal.describe()}`, "error");
      return;
    }
    const why = refusal ? refusal.describe() : "the connection failed";
    this.later(`${what}: ${why}.`);
  }

  /** dropped: an open session ended with close event e. */
  dropped(e, what) {
    const reason = e.reason ? `: ${e.reason}` : "";
    if (takenOver(e.reason)) {
      this.status.say(`${what} ended${reason}. Press Reconnect to take it back.`, "warn");
      return;
    }
    this.later(`${what} was disconnected (code ${e.code}${reason}).`);
  }

  later(text) {
    const seconds = Math.round(this.backoff / 1000);
    this.status.say(`${text} Reconnecting in ${seconds} s (or press Reconnect).`, "warn");
    this.cancel();
    this.timer = setTimeout(() => this.connect(), this.backoff);
    this.backoff = Math.min(maxBackoffMs, this.backoff * 2);
  }
}
