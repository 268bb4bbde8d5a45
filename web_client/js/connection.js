// The websocket to /ws (protocol.md): hello with the resume token, reconnection with
// exponential backoff, keep-alive pings. It knows nothing about the game: messages go to
// `onMessage`, connection states to `onStatus`.

const FATAL = {
  4401: "This seat token is not valid.",
  4403: "This seat token was revoked: a newer one is in use.",
  4404: "This game does not exist (any more).",
};

export class Connection {
  /**
   * @param {object} o
   * @param {() => object} o.hello     builds the hello message at each (re)connection
   * @param {(msg: object) => void} o.onMessage
   * @param {(status: object) => void} o.onStatus  {state: connecting|open|reconnecting|fatal, ...}
   */
  constructor({ hello, onMessage, onStatus, url = null }) {
    this.hello = hello;
    this.onMessage = onMessage;
    this.onStatus = onStatus;
    this.url = url || `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
    this.ws = null;
    this.attempt = 0;
    this.stopped = false;
    this.timer = null;
    this.pingTimer = null;
    this.pongDue = null;
    this.queue = [];
    this.welcomed = false;
    this.lastClose = null; // the code the server closed the last socket with, if any
  }

  start() {
    this.stopped = false;
    this.open();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.pingTimer);
    if (this.ws) this.ws.close(1000, "bye");
    this.ws = null;
  }

  open() {
    clearTimeout(this.timer);
    this.welcomed = false;
    this.onStatus({ state: this.attempt ? "reconnecting" : "connecting", attempt: this.attempt });
    let ws;
    try {
      ws = new WebSocket(this.url, ["olympus.json"]);
    } catch (error) {
      this.retry(`cannot open: ${error}`);
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      ws.send(JSON.stringify(this.hello()));
      clearInterval(this.pingTimer);
      this.pingTimer = setInterval(() => this.ping(), 20000);
    };
    ws.onmessage = (event) => {
      let data;
      try {
        data = JSON.parse(event.data);
      } catch {
        return;
      }
      // A frame holds one message, or an array of them in order (docs/protocol.md).
      for (const msg of Array.isArray(data) ? data : [data]) this.receive(msg);
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      clearInterval(this.pingTimer);
      this.ws = null;
      this.lastClose = event.code || null;
      if (this.stopped) return;
      if (FATAL[event.code]) {
        this.stopped = true;
        this.onStatus({ state: "fatal", code: event.code, reason: FATAL[event.code] });
        return;
      }
      this.retry(event.code ? `closed (${event.code})` : "connection lost");
    };
    ws.onerror = () => {
      // onclose follows and decides
    };
  }

  receive(msg) {
    if (msg.type === "pong") {
      this.pongDue = null;
      return;
    }
    if (msg.type === "welcome") {
      this.attempt = 0;
      this.welcomed = true;
      this.onStatus({ state: "open", resumed: msg.resumed });
    }
    this.onMessage(msg);
  }

  retry(why) {
    if (this.stopped) return;
    const delay = Math.min(15000, 500 * 2 ** this.attempt) * (0.8 + Math.random() * 0.4);
    this.attempt += 1;
    const at = Date.now() + delay;
    this.onStatus({ state: "reconnecting", attempt: this.attempt, at, why });
    this.timer = setTimeout(() => this.open(), delay);
  }

  /** Reconnect now (the "retry now" button). */
  reconnectNow() {
    if (this.ws) return;
    clearTimeout(this.timer);
    this.open();
  }

  ping() {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return;
    if (this.pongDue && Date.now() > this.pongDue) {
      // the socket is dead without knowing it: drop it and reconnect
      const ws = this.ws;
      this.ws = null;
      ws.close();
      this.retry("no answer to ping");
      return;
    }
    this.pongDue = this.pongDue || Date.now() + 15000;
    this.ws.send(JSON.stringify({ type: "ping" }));
  }

  get ready() {
    return Boolean(this.ws && this.ws.readyState === WebSocket.OPEN && this.welcomed);
  }

  send(msg) {
    if (!this.ready) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  /** Test hook: drop the socket as if the network failed. */
  simulateDrop() {
    if (this.ws) this.ws.close(4000, "simulated");
  }
}
