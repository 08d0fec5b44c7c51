// DOM helpers: elements are built with h() and never from HTML strings, so no text the API
// returns can become markup.

/**
 * h creates an element. props: attributes (class, href, aria-*, ...), "on<event>" handlers,
 * and a few properties (disabled, value, checked). children: nodes, strings, numbers, arrays
 * (flattened), null or false (skipped).
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "disabled" || key === "value" || key === "checked") {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

/** replace sets el's children. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** statusRegion is a polite live region: screen readers announce what say() puts there. */
export function statusRegion(className = "status") {
  const el = h("p", { class: className, role: "status", "aria-live": "polite" });
  return {
    el,
    say(text, kind = "info") {
      el.textContent = text;
      el.dataset.kind = kind;
    },
  };
}

/** table builds a table with a caption and header cells; rows go into its tbody. */
export function table(caption, headers) {
  const tbody = h("tbody");
  const el = h("table", {},
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, headers.map((name) => h("th", { scope: "col" }, name)))),
    tbody);
  return { el, tbody };
}
