// A real graphql-transport-ws client: the graphql-ws package over the ws package.
// It subscribes to taskChanged on AGENTDESK_URL with AGENTDESK_TOKEN, prints one JSON
// line per message it gets ({"ready":true} once the subscription is live, then
// {"next": <payload>} per change), and exits 0 after COUNT changes (1 by default).
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const base = process.env.AGENTDESK_URL;
const token = process.env.AGENTDESK_TOKEN;
const count = Number(process.env.COUNT || '1');
if (!base || !token) {
  console.error('set AGENTDESK_URL and AGENTDESK_TOKEN');
  process.exit(2);
}
const print = (v) => process.stdout.write(JSON.stringify(v) + '\n');
const fail = (what, err) => {
  console.error(what, err instanceof Error ? err.message : JSON.stringify(err));
  process.exit(1);
};

const client = createClient({
  url: base.replace(/^http/, 'ws') + '/graphql',
  webSocketImpl: WebSocket,
  connectionParams: { Authorization: `Bearer ${token}` },
  retryAttempts: 0,
  on: { closed: (e) => { if (e && e.code !== 1000) print({ closed: e.code, reason: e.reason }); } },
});

let seen = 0;
const stop = client.subscribe(
  { query: 'subscription { taskChanged { seq kind taskId task { id summary status steps { title } } } }' },
  {
    next: (payload) => {
      print({ next: payload });
      if (++seen >= count) {
        stop();
        client.dispose().then(() => process.exit(0));
      }
    },
    error: (err) => fail('subscription error:', err),
    complete: () => { if (seen < count) fail('subscription completed early', {}); },
  },
);

// The server registers a subscription before it reads the socket's next message, so
// once this query is answered, every change made afterwards reaches the subscription.
client.subscribe({ query: '{ viewer { kind } }' }, {
  next: () => print({ ready: true }),
  error: (err) => fail('query error:', err),
  complete: () => {},
});

setTimeout(() => fail('timed out', {}), Number(process.env.TIMEOUT_MS || '20000')).unref();
