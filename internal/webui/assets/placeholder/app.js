// The placeholder's only script (a vireoctl built without `make ui`): it lists the namespaces
// through vireoctl ui's proxy, which proves the path page -> proxy -> kube-apiserver.
"use strict";

async function listNamespaces() {
  const status = document.getElementById("status");
  const list = document.getElementById("namespaces");
  try {
    const res = await fetch("/api/v1/namespaces", { headers: { Accept: "application/json" } });
    const text = await res.text();
    let body = null;
    try {
      body = JSON.parse(text);
    } catch {
      // A refusal of vireoctl ui itself is plain text.
    }
    if (!res.ok) {
      const why = (body && body.message) || text || res.statusText;
      status.textContent = `Refused (${res.status}): ${why}`;
      return;
    }
    const items = (body && body.items) || [];
    list.replaceChildren(...items.map((ns) => {
      const li = document.createElement("li");
      li.textContent = ns.metadata.name;
      return li;
    }));
    status.textContent = `${items.length} namespaces`;
  } catch (err) {
    status.textContent = `The proxy could not be reached: ${err}`;
  }
}

document.addEventListener("DOMContentLoaded", listNamespaces);
