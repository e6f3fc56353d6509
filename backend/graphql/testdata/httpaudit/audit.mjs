// Runs graphql-http's auditServer against AGENTDESK_URL/graphql with the Bearer token
// AGENTDESK_TOKEN and prints one JSON line per audit: {id, name, status, reason}.
// status is ok, warn or error.
import { auditServer } from 'graphql-http';

const url = process.env.AGENTDESK_URL + '/graphql';
const token = process.env.AGENTDESK_TOKEN;
const results = await auditServer({
  url,
  fetchFn: (input, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set('Authorization', 'Bearer ' + token);
    return fetch(input, { ...init, headers });
  },
});
for (const r of results) {
  console.log(JSON.stringify({ id: r.id, name: r.name, status: r.status, reason: r.status === 'ok' ? '' : r.reason }));
}
