// A list and watch of one collection, kept up to date as kube-apiserver's watch streams
// events: the collection is listed, then watched from the list's resourceVersion; a watch that
// ends or drops is resumed from the last version seen (bookmarks keep it fresh), and one whose
// version is too old (410 Gone) lists again.

import { APIError, errorFrom, request, sleep, withQuery } from "./api.js";

const maxBackoffMs = 10000;

/**
 * Collection holds the objects of path (a collection path; fieldSelector optional) by name.
 * onChange(objects, state) is called after every change; state is "" when live, else what is
 * wrong ("reconnecting: ..."). error is an APIError when the list itself is refused.
 */
export class Collection {
  constructor(path, { fieldSelector = "", onChange }) {
    this.path = path;
    this.fieldSelector = fieldSelector;
    this.onChange = onChange;
    this.objects = new Map();
    this.resourceVersion = "";
    this.state = "loading";
    this.error = null;
    this.abort = new AbortController();
    this.run();
  }

  stop() {
    this.abort.abort();
  }

  /** run lists, then watches until stopped; failures back off and try again. */
  async run() {
    const signal = this.abort.signal;
    let backoff = 500;
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.list(signal);
          needList = false;
        }
        const result = await this.watch(signal);
        backoff = 500;
        if (result === "gone") needList = true;
        // "ended": kube-apiserver closes watches after a while; resume at once.
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof APIError && err.status === 410) {
          needList = true;
          continue;
        }
        const refused = err instanceof APIError && err.status >= 400 && err.status < 500;
        this.error = refused ? err : null;
        this.changed(refused ? err.describe() : `reconnecting: ${err.message}`);
        await sleep(backoff, signal);
        backoff = Math.min(maxBackoffMs, backoff * 2);
      }
    }
  }

  async list(signal) {
    const list = await request("GET", withQuery(this.path, { fieldSelector: this.fieldSelector }), undefined, signal);
    this.objects = new Map(list.items.map((o) => [o.metadata.name, o]));
    this.resourceVersion = list.metadata.resourceVersion;
    this.error = null;
    this.changed("");
  }

  /** watch streams events until the stream ends ("ended") or its version is gone ("gone"). */
  async watch(signal) {
    const url = withQuery(this.path, {
      watch: "1",
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: "true",
      fieldSelector: this.fieldSelector,
    });
    const res = await fetch(url, { headers: { Accept: "application/json" }, signal, cache: "no-store" });
    if (!res.ok) throw await errorFrom(res);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return "ended";
      buffer += value;
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (line && this.apply(JSON.parse(line)) === "gone") {
          reader.cancel().catch(() => {});
          return "gone";
        }
      }
    }
  }

  /** apply applies one watch event; it returns "gone" when the watch must list again. */
  apply(event) {
    const obj = event.object;
    switch (event.type) {
      case "ADDED":
      case "MODIFIED":
        this.objects.set(obj.metadata.name, obj);
        break;
      case "DELETED":
        this.objects.delete(obj.metadata.name);
        break;
      case "BOOKMARK":
        break;
      case "ERROR":
        if (obj && obj.code === 410) return "gone";
        throw new APIError(obj?.code || 500, obj?.message || "watch error", obj?.reason || "");
      default:
        return "";
    }
    if (obj?.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
    if (event.type !== "BOOKMARK") this.changed("");
    return "";
  }

  changed(state) {
    this.state = state;
    this.onChange(this.objects, state);
  }
}
