// The page's only way to the cluster: same-origin requests to /api and /apis, which vireoctl ui
// (or an in-cluster authenticating proxy) forwards to kube-apiserver with the user's credentials.

/** APIError is a refusal: status is the HTTP code, message the server's Status.message. */
export class APIError extends Error {
  constructor(status, message, reason = "") {
    super(message);
    this.status = status;
    this.reason = reason;
  }
  /** describe is the line the page shows: "Refused (403 Forbidden): <the server's message>". */
  describe() {
    return `Refused (${this.status}${this.reason ? " " + this.reason : ""}): ${this.message}`;
  }
}

/** errorFrom turns a refused response into an APIError with the server's message. */
export async function errorFrom(res) {
  const text = await res.text().catch(() => "");
  let message = text.trim() || res.statusText;
  let reason = "";
  try {
    const status = JSON.parse(text);
    if (status && status.message) message = status.message;
    if (status && status.reason) reason = status.reason;
  } catch {
    // vireoctl ui's own refusals are plain text.
  }
  return new APIError(res.status, message, reason);
}

/** request sends one API request and returns its JSON answer, or throws an APIError. */
export async function request(method, path, body, signal) {
  const init = { method, headers: { Accept: "application/json" }, signal, cache: "no-store" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (!res.ok) throw await errorFrom(res);
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

/** paths are the API paths the page uses. */
export const paths = {
  namespaces: () => "/api/v1/namespaces",
  vms: (ns) => `/apis/kubevirt.io/v1/namespaces/${enc(ns)}/virtualmachines`,
  vmis: (ns) => `/apis/kubevirt.io/v1/namespaces/${enc(ns)}/virtualmachineinstances`,
  dataVolumes: (ns) => `/apis/cdi.kubevirt.io/v1beta1/namespaces/${enc(ns)}/datavolumes`,
  events: (ns) => `/api/v1/namespaces/${enc(ns)}/events`,
  // Actions, console and VNC at KubeVirt's subresource group, as virtctl calls them.
  subresource: (ns, resource, name, sub) =>
    `/apis/subresources.kubevirt.io/v1/namespaces/${enc(ns)}/${resource}/${enc(name)}/${sub}`,
};

function enc(s) {
  return encodeURIComponent(s);
}

/** withQuery appends query parameters to path. */
export function withQuery(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") q.set(k, v);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/**
 * explainStreamFailure says why a console or VNC websocket could not be opened. A browser
 * reports only "closed (1006)" for a refused handshake, so the page asks again with a plain
 * GET, which kube-apiserver authorizes as it does the websocket (verb get on the subresource):
 * a refusal comes back with its status and message; a permitted GET gets Vireo's 400 saying the
 * stream needs a websocket, which means the refusal was not about the request (null).
 */
export async function explainStreamFailure(path) {
  try {
    const res = await fetch(path, { headers: { Accept: "application/json" }, cache: "no-store" });
    if (res.ok) return null;
    const err = await errorFrom(res);
    if (res.status === 400 && /websocket/i.test(err.message)) return null;
    return err;
  } catch (e) {
    return new APIError(0, `the web console's server could not be reached: ${e.message}`);
  }
}

/** sleep waits ms or until signal aborts. */
export function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
  });
}
