// @ts-check
// /observe/: start an observation of a real cluster, or replay its audit log (docs/observe.md), then open its run
// page. The token goes to the server in the request body once; the page keeps no copy of it.

async function post(url, body, contentType) {
  const response = await fetch(url, {
    method: "POST", body, credentials: "omit", headers: { Accept: "application/json", "Content-Type": contentType },
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new Error(data?.message ?? response.statusText);
  return data;
}

function handle(form, submit) {
  const error = form.querySelector(".observe-error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      location.assign(await submit(new FormData(form)));
    } catch (e) {
      error.textContent = e.message;
      button.disabled = false;
    }
  });
}

handle(document.querySelector("#observe-form"), async (data) => {
  const body = {};
  for (const name of ["server", "token", "ca", "kubeconfig"]) {
    const value = String(data.get(name) ?? "").trim();
    if (value) body[name] = value;
  }
  return (await post("/api/observations", JSON.stringify(body), "application/json")).control_url;
});

handle(document.querySelector("#replay-form"), async (data) => {
  const file = data.get("log");
  if (!(file instanceof File) || !file.size) throw new Error(document.getElementById("replay-form").dataset.empty);
  return (await post("/api/audit-replays", file, "text/plain")).url;
});
