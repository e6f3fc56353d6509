// The live event stream: one WebSocket, the last seq kept, reconnection with
// ?since= and exponential backoff, and stream.reset handled by reloading.
import type { StreamEvent } from './types';

export type ConnState = 'connecting' | 'live' | 'offline';

export interface StreamOptions {
  url: (since: number | null) => string;
  onEvent: (e: StreamEvent) => void;
  /** Reload everything (first connect, and after stream.reset). */
  onReset: () => void | Promise<void>;
  onState: (s: ConnState) => void;
  /** The server ended the credential (close code 4401: signed out, revoked, removed): no reconnecting. */
  onEnded?: (reason: string) => void;
  WebSocketImpl?: typeof WebSocket;
}

export class EventStream {
  private ws: WebSocket | null = null;
  private since: number | null = null;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  private loaded = false;

  constructor(private o: StreamOptions) {}

  get lastSeq(): number | null {
    return this.since;
  }

  start(): void {
    this.closed = false;
    this.connect();
    addEventListener('online', this.kick);
    document.addEventListener('visibilitychange', this.kick);
  }

  stop(): void {
    this.closed = true;
    removeEventListener('online', this.kick);
    document.removeEventListener('visibilitychange', this.kick);
    if (this.timer) clearTimeout(this.timer);
    this.ws?.close();
    this.ws = null;
  }

  /** Reconnect now (back online, or the tab became visible after a sleep). */
  private kick = () => {
    if (this.closed || document.visibilityState === 'hidden') return;
    if (!this.ws || this.ws.readyState > 1) {
      if (this.timer) clearTimeout(this.timer);
      this.attempt = 0;
      this.connect();
    }
  };

  private connect(): void {
    this.o.onState('connecting');
    const WS = this.o.WebSocketImpl ?? WebSocket;
    const ws = new WS(this.o.url(this.since));
    this.ws = ws;
    let opened = false;
    ws.onopen = async () => {
      opened = true;
      this.attempt = 0;
      this.o.onState('live');
      // First connection: load the state now that the stream buffers what follows.
      if (this.since === null) {
        this.loaded = true;
        await this.o.onReset();
      }
    };
    ws.onmessage = (m) => {
      let e: StreamEvent;
      try {
        e = JSON.parse(String(m.data));
      } catch {
        return;
      }
      if (typeof e.seq === 'number') this.since = Math.max(this.since ?? 0, e.seq);
      if (e.type === 'stream.reset') {
        if (typeof e.data?.seq === 'number') this.since = e.data.seq;
        void this.o.onReset();
        return;
      }
      this.o.onEvent(e);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.closed) return;
      if (ev.code === 4401 && this.o.onEnded) {
        this.stop();
        this.o.onEnded(ev.reason);
        return;
      }
      this.o.onState('offline');
      if (!opened && this.since === null && !this.loaded) {
        this.loaded = true;
        // Never connected: still show the data (the stream may be refused, e.g. by a proxy).
        void this.o.onReset();
      }
      const delay = Math.min(30_000, 500 * 2 ** this.attempt++) * (0.8 + Math.random() * 0.4);
      this.timer = setTimeout(() => this.connect(), delay);
    };
  }
}
