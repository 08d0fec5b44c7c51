// Vireo's web console: the page's frame (header, breadcrumbs, namespace form) and its router.
// Console and display load on demand, so the lists come up without their libraries.

import { APIError, paths, request } from "./api.js";
import { h, replace, statusRegion } from "./dom.js";
import { namespacePage } from "./list.js";
import { detailPage } from "./detail.js";
import { href, parse } from "./router.js";

const lastNamespaceKey = "vireo.namespace";
let cleanup = null;

function main() {
  window.addEventListener("hashchange", route);
  route();
}

async function route() {
  if (cleanup) cleanup();
  cleanup = null;
  const r = parse(location.hash);
  const main = document.getElementById("main");
  breadcrumbs(r);
  if (r.ns) localStorage.setItem(lastNamespaceKey, r.ns);
  document.title = titleOf(r);
  switch (r.page) {
    case "namespace":
      cleanup = namespacePage(main, r.ns);
      break;
    case "detail":
      cleanup = detailPage(main, r.ns, r.kind, r.name);
      break;
    case "console": {
      replace(main, h("p", { role: "status" }, "Loading the serial console…"));
      const { consolePage } = await import("./console.js");
      if (parse(location.hash).page === "console") cleanup = consolePage(main, r.ns, r.name);
      break;
    }
    case "display": {
      replace(main, h("p", { role: "status" }, "Loading the display…"));
      const { displayPage } = await import("./display.js");
      if (parse(location.hash).page === "display") cleanup = displayPage(main, r.ns, r.name);
      break;
    }
    default:
      cleanup = namespacesPage(main);
  }
  // Moving focus to the page's heading tells keyboard and screen reader users the page changed.
  const heading = main.querySelector("h1");
  if (heading) {
    heading.tabIndex = -1;
    heading.focus({ preventScroll: true });
  }
}

function titleOf(r) {
  switch (r.page) {
    case "namespace": return `${r.ns} · Vireo`;
    case "detail": return `${r.name} (${r.kind.toUpperCase()}) · Vireo`;
    case "console": return `${r.name} console · Vireo`;
    case "display": return `${r.name} display · Vireo`;
    default: return "Vireo web console";
  }
}

function breadcrumbs(r) {
  const items = [h("li", {}, h("a", { href: "#/" }, "Namespaces"))];
  if (r.ns) items.push(h("li", {}, h("a", { href: href("ns", r.ns) }, r.ns)));
  if (r.name) {
    const kind = r.kind || "vmi";
    items.push(h("li", {}, h("a", { href: href("ns", r.ns, kind, r.name) }, `${kind.toUpperCase()} ${r.name}`)));
  }
  if (r.page === "console" || r.page === "display") items.push(h("li", {}, r.page === "console" ? "Serial console" : "Display"));
  const last = items[items.length - 1].querySelector("a") || items[items.length - 1];
  last.setAttribute("aria-current", "page");
  replace(document.getElementById("crumbs"), h("ol", {}, items));
}

/**
 * namespacesPage lists the namespaces the user may list, and always offers a form: a user with
 * rights in one namespace only may not list namespaces at all.
 */
function namespacesPage(main) {
  const status = statusRegion();
  const list = h("ul", { class: "namespaces" });
  const input = h("input", { id: "ns-input", name: "namespace", required: true, autocomplete: "off",
    value: localStorage.getItem(lastNamespaceKey) || "", pattern: "[a-z0-9]([a-z0-9\\-]*[a-z0-9])?" });
  const form = h("form", { class: "ns-form", onsubmit: (e) => {
    e.preventDefault();
    location.hash = href("ns", input.value.trim());
  } }, h("label", { for: "ns-input" }, "Namespace"), input, h("button", { type: "submit" }, "Open"));
  replace(main, h("h1", {}, "Namespaces"), form, status.el, list);
  const abort = new AbortController();
  status.say("Listing the namespaces…");
  request("GET", paths.namespaces(), undefined, abort.signal).then((body) => {
    const names = body.items.map((n) => n.metadata.name).sort();
    replace(list, names.map((name) => h("li", {}, h("a", { href: href("ns", name) }, name))));
    status.say(`${names.length} namespaces you may list.`, "ok");
  }, (err) => {
    if (abort.signal.aborted) return;
    const why = err instanceof APIError ? err.describe() : String(err);
    status.say(`The namespaces cannot be listed (${why}). Name one above.`, "warn");
  });
  return () => abort.abort();
}

main();
