// The OCR platform's web console: sign in with the stack's Cognito user pool, upload files through the jobs
// API, watch the list of one's jobs, and look at a result drawn over its page images. Plain browser
// JavaScript with no build step; config.json (written next to it at deploy time) names the API, the
// Cognito endpoint and the app client, and may carry the pool's password policy (Cognito's PasswordPolicyType).
//
// Sign-in follows Cognito's API: InitiateAuth with USER_PASSWORD_AUTH; an invited user (FORCE_CHANGE_PASSWORD)
// gets the NEW_PASSWORD_REQUIRED challenge instead of tokens, which RespondToAuthChallenge answers with the
// challenge's Session, USERNAME and NEW_PASSWORD:
// https://docs.aws.amazon.com/cognito-user-identity-pools/latest/APIReference/API_InitiateAuth.html
// https://docs.aws.amazon.com/cognito-user-identity-pools/latest/APIReference/API_RespondToAuthChallenge.html
// An ID token lasts an hour; when it has expired (its exp has passed, or the API answers 401) the console gets
// a new one with the refresh token (REFRESH_TOKEN_AUTH), so that work in progress goes on, and returns to the
// sign-in form with a message only when Cognito refuses the refresh token too (it expired or was revoked):
// https://docs.aws.amazon.com/cognito/latest/developerguide/amazon-cognito-user-pools-using-the-refresh-token.html
"use strict";

const state = {
  config: null,
  token: sessionStorage.getItem("idToken"),
  refreshToken: sessionStorage.getItem("refreshToken"),
  challenge: null,  // { session, username } while the new-password step is open
  renewing: null,   // the refresh in flight, shared by every caller
  timer: null,
};
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const SESSION_ENDED = "Your session has expired. Sign in again.";

async function main() {
  state.config = await (await fetch("config.json", { cache: "no-store" })).json();
  showPasswordRules(state.config.passwordPolicy);
  $("sign-in").addEventListener("submit", signIn);
  $("new-password-form").addEventListener("submit", setNewPassword);
  $("new-password-cancel").addEventListener("click", () => backToSignIn(""));
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
  for (const id of ["sign-in-view", "new-password-view", "jobs-view", "result-view"]) $(id).hidden = id !== view;
  const out = view === "sign-in-view" || view === "new-password-view";
  $("sign-out").hidden = out;
  $("who").textContent = out ? "" : claims(state.token).email || "";
}

async function route() {
  clearInterval(state.timer);
  if (state.challenge) return show("new-password-view");
  if (!signedIn()) {
    if (!state.token && !state.refreshToken) return show("sign-in-view");
    if (!(await renew())) return;  // renew() returned to the sign-in form, and said why
  }
  const match = location.hash.match(/^#\/jobs\/([A-Za-z0-9_-]+)$/);
  if (match) return showResult(match[1]);
  show("jobs-view");
  refreshJobs();
  state.timer = setInterval(refreshJobs, 2000);
}

// ----- Cognito -------------------------------------------------------------------------------------------

async function cognito(operation, body) {
  const response = await fetch(state.config.cognitoUrl, {
    method: "POST",
    headers: { "Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": `AWSCognitoIdentityProviderService.${operation}` },
    body: JSON.stringify({ ClientId: state.config.userPoolClientId, ...body }),
  });
  const answer = await response.json().catch(() => ({}));
  if (response.ok) return answer;
  // An error's __type is the exception's name, sometimes after a namespace and "#".
  const type = String(answer.__type || "").split("#").pop();
  return { error: type || `HTTP ${response.status}`, message: answer.message || answer.Message || "" };
}

async function signIn(event) {
  event.preventDefault();
  $("sign-in-error").textContent = "";
  const username = $("email").value.trim();
  const answer = await cognito("InitiateAuth", {
    AuthFlow: "USER_PASSWORD_AUTH", AuthParameters: { USERNAME: username, PASSWORD: $("password").value },
  });
  $("password").value = "";
  if (answer.error) {
    $("sign-in-error").textContent = signInError(answer);
    return;
  }
  if (answer.ChallengeName === "NEW_PASSWORD_REQUIRED") {
    // USERNAME in the answer: the e-mail address the user signed in with (the pool signs users in by e-mail).
    state.challenge = { session: answer.Session, username };
    $("new-password-error").textContent = "";
    show("new-password-view");
    $("new-password").focus();
    return;
  }
  signedInWith(answer);
}

function signInError({ error, message }) {
  if (error === "NotAuthorizedException" && /expired/i.test(message)) {
    return "Your temporary password has expired. Ask your administrator to invite you again.";
  }
  if (error === "NotAuthorizedException" && /disabled/i.test(message)) return "This account is disabled.";
  if (error === "NotAuthorizedException" || error === "UserNotFoundException") return "Wrong e-mail address or password.";
  if (error === "PasswordResetRequiredException") return "Your password must be reset. Ask your administrator.";
  if (error === "TooManyRequestsException") return "Too many attempts. Wait a minute and try again.";
  return `Sign-in failed (${error}${message ? `: ${message}` : ""}).`;
}

async function setNewPassword(event) {
  event.preventDefault();
  $("new-password-error").textContent = "";
  const password = $("new-password").value;
  if (password !== $("confirm-password").value) {
    $("new-password-error").textContent = "The two passwords differ. Type the same new password twice.";
    return;
  }
  const answer = await cognito("RespondToAuthChallenge", {
    ChallengeName: "NEW_PASSWORD_REQUIRED", Session: state.challenge.session,
    ChallengeResponses: { USERNAME: state.challenge.username, NEW_PASSWORD: password },
  });
  if (answer.error === "InvalidPasswordException" || answer.error === "InvalidParameterException") {
    $("new-password-error").textContent =
      `This password does not follow the rules below${answer.message ? ` (${answer.message})` : ""}. Choose another.`;
    return;
  }
  $("new-password").value = $("confirm-password").value = "";
  if (answer.error) {
    // The challenge's session lasts a few minutes (the app client's AuthSessionValidity, 3 by default); Cognito
    // refuses an expired one with NotAuthorizedException.
    // https://docs.aws.amazon.com/cognito-user-identity-pools/latest/APIReference/API_UserPoolClientType.html
    const expired = ["NotAuthorizedException", "ExpiredCodeException", "ResourceNotFoundException"].includes(answer.error);
    backToSignIn(expired
      ? "Choosing a new password took too long and the sign-in expired. Sign in again with your temporary password."
      : `Setting the new password failed (${answer.error}${answer.message ? `: ${answer.message}` : ""}).`);
    return;
  }
  signedInWith(answer);
}

function showPasswordRules(policy) {
  if (!policy) return;  // the pool's rules as index.html lists them
  const rules = [`at least ${policy.MinimumLength || 8} characters`];
  if (policy.RequireUppercase) rules.push("an upper-case letter");
  if (policy.RequireLowercase) rules.push("a lower-case letter");
  if (policy.RequireNumbers) rules.push("a digit");
  if (policy.RequireSymbols) rules.push("a symbol, such as ! @ # $ % ^ & *");
  $("password-rules").replaceChildren(...rules.map((rule) => Object.assign(document.createElement("li"), { textContent: rule })));
}

function signedInWith(answer) {
  if (!answer.AuthenticationResult) {
    // Another challenge (an MFA code, say) that this console does not offer.
    backToSignIn(`This account needs a sign-in step the console does not offer (${answer.ChallengeName}).`);
    return;
  }
  state.challenge = null;
  keepTokens(answer.AuthenticationResult);
  route();
}

function keepTokens(result) {
  state.token = result.IdToken;
  sessionStorage.setItem("idToken", state.token);
  if (result.RefreshToken) {  // REFRESH_TOKEN_AUTH answers without a new one: keep the one there is
    state.refreshToken = result.RefreshToken;
    sessionStorage.setItem("refreshToken", state.refreshToken);
  }
}

// A new ID token from the refresh token; true when there is one. Otherwise the console is back at the sign-in
// form, which says that the session has expired.
function renew() {
  if (!state.renewing) {
    state.renewing = (async () => {
      const answer = state.refreshToken
        ? await cognito("InitiateAuth", { AuthFlow: "REFRESH_TOKEN_AUTH", AuthParameters: { REFRESH_TOKEN: state.refreshToken } })
        : { error: "NoRefreshToken" };
      if (answer.error || !answer.AuthenticationResult) {
        forgetTokens();
        backToSignIn(SESSION_ENDED);
        return false;
      }
      keepTokens(answer.AuthenticationResult);
      $("session-note").textContent = "Your sign-in had expired; it was renewed.";
      setTimeout(() => { $("session-note").textContent = ""; }, 10000);
      return true;
    })().finally(() => { state.renewing = null; });
  }
  return state.renewing;
}

function forgetTokens() {
  state.token = state.refreshToken = null;
  sessionStorage.removeItem("idToken");
  sessionStorage.removeItem("refreshToken");
}

function backToSignIn(message) {
  clearInterval(state.timer);
  state.challenge = null;
  show("sign-in-view");
  $("sign-in-error").textContent = message;
}

function signOut() {
  forgetTokens();
  location.hash = "#/";
  backToSignIn("");
}

async function api(method, path, body) {
  if (!signedIn() && !(await renew())) throw new Error(SESSION_ENDED);
  const call = () => fetch(state.config.apiUrl + path, {
    method,
    headers: { Authorization: `Bearer ${state.token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  let response = await call();
  // 401: API Gateway refused the token (expired, or revoked); one new ID token, one more try.
  if (response.status === 401 && (await renew())) response = await call();
  if (response.status === 401) {
    forgetTokens();
    backToSignIn(SESSION_ENDED);
    throw new Error(SESSION_ENDED);
  }
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
      const options = {};
      if ($("searchable-pdf").checked) options.outputs = ["pdf"];
      if ($("forms").checked) options.features = ["forms"];
      if (Object.keys(options).length) request.options = options;
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
  // A COMPLETED job's warnings (pages_failed: the pages that could not be read and were left out, ...).
  for (const warning of job.warnings || []) {
    const note = document.createElement("div");
    note.className = `warning warning-${warning.code}`;
    note.textContent = `⚠ ${warning.message}`;
    status.append(note);
  }
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

// The result in the formats the platform writes from result.json (docs/using-it/output-formats.md): a job that asked
// for one has its file; any other is made on request by GET /jobs/{id}/result?format=.
const FORMAT_FILES = { hocr: "result.hocr", alto: "result.alto.xml", textract: "textract.json" };

function formatDownload(jobId, format, file, link) {
  const anchor = document.createElement("a");
  anchor.download = file;
  anchor.textContent = `Download ${file}`;
  anchor.dataset.format = format;
  if (link) {
    anchor.href = link;
    return anchor;
  }
  anchor.href = "#";
  anchor.addEventListener("click", async (event) => {
    event.preventDefault();
    try {
      const made = await api("GET", `/jobs/${jobId}/result?format=${format}`);
      anchor.href = made.formats[format];
      window.location.assign(made.formats[format]);
    } catch (error) {
      $("upload-error").textContent = String(error.message || error);
    }
  }, { once: true });
  return anchor;
}

async function showResult(jobId) {
  show("result-view");
  $("result-title").textContent = "Loading…";
  const links = await api("GET", `/jobs/${jobId}/result`);
  const result = await (await fetch(links.result)).json();
  $("result-title").textContent = `${result.page_count} page(s), ${result.engine.name}`
    + (result.warnings || []).map((warning) => ` — ⚠ ${warning.message}`).join("");
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
  for (const [format, file] of Object.entries(FORMAT_FILES)) downloads.append(" ", formatDownload(jobId, format, file, (links.formats || {})[format]));
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
  if (!page.width) {
    // An Office or HTML page (a document, slide or sheet read from the file): no image and no geometry to draw.
    const text = document.createElement("pre");
    text.className = "native-page";
    text.textContent = page.markdown || "";
    holder.replaceChildren(text);
    return;
  }
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
  drawForms(svg, page);
  holder.replaceChildren(image, svg);
}

// Forms (key_values, selection_marks): each label and its answer outlined and joined, each check box by its state.
function drawForms(svg, page) {
  const outline = (points, className, describe) => {
    const shape = document.createElementNS(SVG, "polygon");
    shape.setAttribute("class", className);
    shape.setAttribute("points", points.map(([x, y]) => `${x},${y}`).join(" "));
    const title = document.createElementNS(SVG, "title");
    title.textContent = describe;
    shape.append(title);
    shape.addEventListener("mouseenter", () => { $("hover").textContent = describe; });
    svg.append(shape);
  };
  const centre = (points) => [0, 1].map((axis) => points.reduce((sum, point) => sum + point[axis], 0) / points.length);
  for (const pair of page.key_values || []) {
    const value = pair.value;
    const describe = `${pair.key.text} → ${value ? value.text : "(blank)"} (confidence ${pair.confidence.toFixed(2)})`;
    outline(pair.key.polygon, "kv-key", describe);
    if (!value) continue;
    if (!value.state) outline(value.polygon, "kv-value", describe);
    const [[x1, y1], [x2, y2]] = [centre(pair.key.polygon), centre(value.polygon)];
    const link = document.createElementNS(SVG, "line");
    link.setAttribute("class", "kv-link");
    Object.entries({ x1, y1, x2, y2 }).forEach(([k, v]) => link.setAttribute(k, v));
    svg.append(link);
  }
  for (const mark of page.selection_marks || []) {
    outline(mark.polygon, `mark ${mark.state}`, `check box: ${mark.state} (confidence ${mark.confidence.toFixed(2)})`);
  }
}

main();
