// The OCR platform's web console: sign in with the stack's Cognito user pool, upload files through the jobs
// API, watch the list of one's jobs, and look at a result drawn over its page images. Plain browser
// JavaScript with no build step; config.json (written next to it at deploy time) names the API, the
// Cognito endpoint and the app client.
"use strict";

const state = { config: null, token: sessionStorage.getItem("idToken"), timer: null };
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

async function main() {
  state.config = await (await fetch("config.json", { cache: "no-store" })).json();
  $("sign-in").addEventListener("submit", signIn);
  $("sign-out").addEventListener("click", signOut);
  $("files").addEventListener("change", (event) => upload(event.target.files));
  const drop = $("drop");
  drop.addEventListener("dragover", (event) => { event.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (event) => { event.preventDefault(); drop.classList.remove("over"); upload(event.dataTransfer.files); });
  window.addEventListener("hashchange", route);
  route();
}

function claims(token) {
  try {
    return JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
  } catch (error) {
    return {};
  }
}

function signedIn() {
  return Boolean(state.token) && (claims(state.token).exp || 0) * 1000 > Date.now();
}

function show(view) {
  for (const id of ["sign-in-view", "jobs-view", "result-view"]) $(id).hidden = id !== view;
  $("sign-out").hidden = view === "sign-in-view";
  $("who").textContent = view === "sign-in-view" ? "" : claims(state.token).email || "";
}

function route() {
  clearInterval(state.timer);
  if (!signedIn()) return show("sign-in-view");
  const match = location.hash.match(/^#\/jobs\/([A-Za-z0-9_-]+)$/);
  if (match) return showResult(match[1]);
  show("jobs-view");
  refreshJobs();
  state.timer = setInterval(refreshJobs, 2000);
}

async function signIn(event) {
  event.preventDefault();
  $("sign-in-error").textContent = "";
  const response = await fetch(state.config.cognitoUrl, {
    method: "POST",
    headers: { "Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "AWSCognitoIdentityProviderService.InitiateAuth" },
    body: JSON.stringify({
      AuthFlow: "USER_PASSWORD_AUTH",
      ClientId: state.config.userPoolClientId,
      AuthParameters: { USERNAME: $("email").value, PASSWORD: $("password").value },
    }),
  });
  const answer = await response.json();
  if (!response.ok || !answer.AuthenticationResult) {
    $("sign-in-error").textContent = answer.message || answer.__type || "Sign-in failed.";
    return;
  }
  state.token = answer.AuthenticationResult.IdToken;
  sessionStorage.setItem("idToken", state.token);
  route();
}

function signOut() {
  state.token = null;
  sessionStorage.removeItem("idToken");
  location.hash = "#/";
  route();
}

async function api(method, path, body) {
  const response = await fetch(state.config.apiUrl + path, {
    method,
    headers: { Authorization: `Bearer ${state.token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (response.status === 401) { signOut(); throw new Error("Your session ended; sign in again."); }
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error ? `${answer.error.code}: ${answer.error.message}` : JSON.stringify(answer));
  return answer;
}

async function upload(files) {
  $("upload-error").textContent = "";
  for (const file of files) {
    try {
      const request = { filename: file.name, model: $("model").value, language: $("language").value || "en" };
      if ($("pages").value.trim()) request.pages = $("pages").value.trim();
      if ($("searchable-pdf").checked) request.options = { outputs: ["pdf"] };
      const created = await api("POST", "/jobs", request);
      const form = new FormData();
      for (const [name, value] of Object.entries(created.upload.fields)) form.append(name, value);
      form.append("file", file);
      const uploaded = await fetch(created.upload.url, { method: "POST", body: form });
      if (!uploaded.ok) throw new Error(`The upload of ${file.name} was refused (${uploaded.status}).`);
    } catch (error) {
      $("upload-error").textContent = String(error.message || error);
    }
  }
  refreshJobs();
}

async function refreshJobs() {
  let listing;
  try {
    listing = await api("GET", "/jobs?limit=50");
  } catch (error) {
    $("upload-error").textContent = String(error.message || error);
    return;
  }
  const body = document.querySelector("#jobs tbody");
  body.replaceChildren(...listing.jobs.map(jobRow));
}

function jobRow(job) {
  const row = document.createElement("tr");
  row.dataset.jobId = job.job_id;
  const name = document.createElement("td");
  if (job.status === "COMPLETED") {
    const link = document.createElement("a");
    link.href = `#/jobs/${job.job_id}`;
    link.textContent = job.file_name || job.job_id;
    name.append(link);
  } else {
    name.textContent = job.file_name || job.job_id;
  }
  const status = document.createElement("td");
  status.className = `status status-${job.status}`;
  status.textContent = job.status + (job.error ? ` — ${job.error.code}: ${job.error.message}` : "");
  const progress = document.createElement("td");
  if (job.page_count) {
    const bar = document.createElement("progress");
    bar.max = job.page_count;
    bar.value = job.pages_done || 0;
    progress.append(bar, ` ${job.pages_done || 0}/${job.page_count}`);
  }
  const created = document.createElement("td");
  created.textContent = new Date(job.created_at).toLocaleString();
  const model = document.createElement("td");
  model.textContent = job.model;
  row.append(name, model, status, progress, created);
  return row;
}

async function showResult(jobId) {
  show("result-view");
  $("result-title").textContent = "Loading…";
  const links = await api("GET", `/jobs/${jobId}/result`);
  const result = await (await fetch(links.result)).json();
  $("result-title").textContent = `${result.page_count} page(s), ${result.engine.name}`;
  const downloads = $("result-downloads");
  downloads.replaceChildren(
    download("result.json", JSON.stringify(result, null, 2), "application/json"),
    " ",
    download("result.md", result.pages.map((page) => page.markdown || pageText(page)).join("\n\n"), "text/markdown"),
  );
  if (links.pdf) {
    const pdf = document.createElement("a");
    pdf.href = links.pdf;
    pdf.download = "result.pdf";
    pdf.textContent = "Download result.pdf";
    downloads.append(" ", pdf);
  }
  $("text").textContent = result.text;
  $("markdown").textContent = result.pages.map((page) => page.markdown || "").join("\n\n");
  const images = new Map(links.pages.map((page) => [page.page, page.image]));
  const nav = $("page-nav");
  nav.replaceChildren(...result.pages.map((page) => {
    const button = document.createElement("button");
    button.textContent = `Page ${page.page}`;
    button.addEventListener("click", () => drawPage(page, images.get(page.page)));
    return button;
  }));
  if (result.pages.length) drawPage(result.pages[0], images.get(result.pages[0].page));
}

function pageText(page) {
  return (page.lines || []).map((line) => line.text).join("\n");
}

function download(name, text, type) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([text], { type }));
  link.download = name;
  link.textContent = `Download ${name}`;
  return link;
}

function drawPage(page, imageUrl) {
  const holder = $("page-holder");
  const image = document.createElement("img");
  image.alt = `Page ${page.page}`;
  if (imageUrl) image.src = imageUrl;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${page.width} ${page.height}`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.dataset.page = page.page;
  for (const block of page.blocks || []) {
    const [x0, y0, x1, y1] = block.bbox;
    const rect = document.createElementNS(SVG, "rect");
    rect.setAttribute("class", "block");
    Object.entries({ x: x0, y: y0, width: x1 - x0, height: y1 - y0 }).forEach(([k, v]) => rect.setAttribute(k, v));
    svg.append(rect);
  }
  for (const line of page.lines || []) {
    const polygon = document.createElementNS(SVG, "polygon");
    polygon.setAttribute("class", "line");
    polygon.setAttribute("points", line.polygon.map(([x, y]) => `${x},${y}`).join(" "));
    const describe = `${line.text} (score ${line.score === undefined ? "?" : line.score.toFixed(2)})`;
    const title = document.createElementNS(SVG, "title");
    title.textContent = describe;
    polygon.append(title);
    polygon.addEventListener("mouseenter", () => { $("hover").textContent = describe; });
    svg.append(polygon);
  }
  holder.replaceChildren(image, svg);
}

main();
