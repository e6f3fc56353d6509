// The A2A JavaScript SDK's client against an agent of a real agentdesk server, for
// jsclient_test.go: node client.mjs BASE TOKEN, BASE being the agent's A2A endpoint (its
// card is under BASE/.well-known/agent-card.json). It prints one JSON line per step:
//   {"step":"card", ...}      the card it resolved
//   {"step":"send", ...}      message/send: the task it made
//   {"step":"event", ...}     each event of message/stream, until the stream ends
// The test completes the streamed task (as the agent, over REST) once it sees its first
// event, and reads the rest.
import { randomUUID } from "node:crypto";
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client";

const [base, token] = process.argv.slice(2);
const withToken = (url, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${token}`);
  return fetch(url, { ...init, headers });
};
const print = (v) => process.stdout.write(JSON.stringify(v) + "\n");
const message = (text) => ({
  message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text }] },
});

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: withToken })],
  }),
);
// The card's full URL: the SDK resolves its default path (".well-known/agent-card.json")
// against the base as a URL does, which drops the base's last segment (the agent's name).
const client = await factory.createFromUrl(`${base}/.well-known/agent-card.json`, "");
const card = await client.getAgentCard();
print({ step: "card", name: card.name, protocolVersion: card.protocolVersion, url: card.url });

const task = await client.sendMessage(message("Send from JavaScript\nwith details"));
print({ step: "send", kind: task.kind, id: task.id, state: task.status.state });

for await (const e of client.sendMessageStream(message("Stream from JavaScript"))) {
  const text = (parts) => (parts ?? []).map((p) => p.text).join("");
  print({
    step: "event", kind: e.kind, id: e.kind === "task" ? e.id : e.taskId,
    state: e.status?.state, final: e.final ?? false, artifact: e.artifact ? text(e.artifact.parts) : undefined,
  });
}
