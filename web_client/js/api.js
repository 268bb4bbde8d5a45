// The HTTP API (api.md) and what the browser keeps in localStorage: seat tokens per room and the
// last processed position per room and audience (the resume token of protocol.md).

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.sentence) || `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
  }
}

// The signed-in player's CSRF token (account.js): sent with every request that changes
// something, as the service asks of a request made with the session cookie (api.md).
let csrfToken = null;

export function setCsrf(token) {
  csrfToken = token || null;
}

export async function call(method, path, body = undefined, token = null) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  if (method !== "GET" && csrfToken) headers["X-CSRF-Token"] = csrfToken;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

/** The player's display name goes with every seat it takes (api.md, "Names"). */
function withName(body) {
  const name = displayName();
  return name ? { ...body, name } : body;
}

export const api = {
  createRoom: (options) => call("POST", "/rooms", withName(options)),
  createComputerRoom: (options) => call("POST", "/rooms/computer", withName(options)),
  watchComputer: (levels) => call("POST", "/rooms/watch", levels),
  /** A seat; `delay` (the room's broadcast delay as shown, null for none) is the one agreed to. */
  join: (room, side, delay = undefined) => {
    const body = side ? { side } : {};
    if (delay !== undefined) body.broadcast_delay_seconds = delay;
    return call("POST", `/rooms/${encodeURIComponent(room)}/join`, withName(body));
  },
  featured: () => call("GET", "/rooms/featured"),
  hostSeat: (room, hostToken) => call("POST", `/rooms/${encodeURIComponent(room)}/join`, undefined, hostToken),
  rematch: (room, token) => call("POST", `/rooms/${encodeURIComponent(room)}/rematch`, undefined, token),
  listRooms: (status) => call("GET", `/rooms?status=${status}&limit=100`),
  room: (room) => call("GET", `/rooms/${encodeURIComponent(room)}`),
  view: (room) => call("GET", `/rooms/${encodeURIComponent(room)}/view`),
  log: (room) => call("GET", `/rooms/${encodeURIComponent(room)}/log`),
  ratings: (room) => call("GET", `/rooms/${encodeURIComponent(room)}/ratings`),
  lobbyCounts: () => call("GET", "/lobby"),
  hint: (room, token) => call("POST", `/rooms/${encodeURIComponent(room)}/hint`, undefined, token),
  /** The coach's analysis: `{status, body, retryAfter}` (202 while it is being made). */
  analysis: async (room) => {
    const response = await fetch(`/rooms/${encodeURIComponent(room)}/analysis`, { headers: { Accept: "application/json" } });
    const body = await response.json().catch(() => null);
    if (response.status !== 200 && response.status !== 202) throw new ApiError(response.status, body);
    return { status: response.status, body, retryAfter: Number(response.headers.get("retry-after")) || 0 };
  },
};

// --- localStorage ---------------------------------------------------------------------------

const SEATS = "olympus.seats";

function readJson(key, fallback) {
  try {
    const raw = localStorage.getItem(key);
    return raw ? JSON.parse(raw) : fallback;
  } catch {
    return fallback;
  }
}

function writeJson(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
    return true;
  } catch {
    return false;
  }
}

/** {room: {seat, token, epoch, created}} — the seats this browser holds. */
export function seats() {
  return readJson(SEATS, {});
}

export function seatFor(room) {
  return seats()[room] || null;
}

export function saveSeat(room, record) {
  const all = seats();
  all[room] = { ...(all[room] || {}), ...record, saved: Date.now() };
  writeJson(SEATS, all);
}

export function forgetSeat(room) {
  const all = seats();
  delete all[room];
  writeJson(SEATS, all);
  localStorage.removeItem(snapshotKey(room, "olympians"));
  localStorage.removeItem(snapshotKey(room, "chthonians"));
}

function snapshotKey(room, audience) {
  return `olympus.game.${room}.${audience || "spectator"}`;
}

/** The last position this browser processed for a room and audience: {epoch, seq, model, log}. */
export function loadSnapshot(room, audience) {
  return readJson(snapshotKey(room, audience), null);
}

export function saveSnapshot(room, audience, snapshot) {
  const log = snapshot.log.length > 600 ? snapshot.log.slice(-600) : snapshot.log;
  if (!writeJson(snapshotKey(room, audience), { ...snapshot, log })) {
    writeJson(snapshotKey(room, audience), { ...snapshot, log: log.slice(-100) });
  }
}

export function dropSnapshot(room, audience) {
  localStorage.removeItem(snapshotKey(room, audience));
}

export function prefs() {
  return readJson("olympus.prefs", {});
}

export function savePrefs(p) {
  writeJson("olympus.prefs", p);
}

/** The display name this browser plays under ("" when none was chosen). */
export function displayName() {
  return readJson("olympus.name", "");
}

export function saveDisplayName(name) {
  writeJson("olympus.name", name.trim());
}
