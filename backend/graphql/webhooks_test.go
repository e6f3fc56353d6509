package graphql_test

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// The webhooks' admin API as the contract fixes it: the secret shown once, the URL
// checked and fixed, admin only.
func TestWebhooksAdminAPI(t *testing.T) { pgtest.Engines(t, testWebhooksAdminAPI) }

func testWebhooksAdminAPI(t *testing.T, engine string) {
	env := testenv.StartWithOn(t, engine, server.Config{WebhooksAllowPrivate: true}) // rcv is on loopback
	pid := env.Project.ID
	admin := env.Token(t, pid, allScopes...)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer rcv.Close()

	type hook struct {
		ID          int64
		URL         string
		Events      []string
		Secret      *string
		Description string
		Enabled     bool
	}
	var created hook
	do(t, env, admin, `mutation($u: String!) { createWebhook(url: $u, events: ["task.*", "message.created"], description: "ci") { id url events secret description enabled } }`,
		map[string]any{"u": rcv.URL + "/in"}).ok(t).into(t, "createWebhook", &created)
	if created.Secret == nil || !strings.HasPrefix(*created.Secret, "whsec_") || created.URL != rcv.URL+"/in" || !created.Enabled ||
		strings.Join(created.Events, ",") != "task.*,message.created" || created.Description != "ci" {
		t.Fatalf("createWebhook = %+v", created)
	}
	if key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(*created.Secret, "whsec_")); err != nil || len(key) != 24 {
		t.Fatalf("secret %q: %d bytes, %v; want base64 of 24 bytes", *created.Secret, len(key), err)
	}

	var list []hook
	do(t, env, admin, `{ webhooks { id url events secret enabled } }`, nil).ok(t).into(t, "webhooks", &list)
	if len(list) != 1 || list[0].ID != created.ID || list[0].Secret != nil {
		t.Fatalf("webhooks = %+v (the secret is shown once only)", list)
	}

	var updated hook
	do(t, env, admin, `mutation($id: Int!) { updateWebhook(id: $id, events: [], enabled: false) { id url events enabled } }`,
		map[string]any{"id": created.ID}).ok(t).into(t, "updateWebhook", &updated)
	if updated.Enabled || len(updated.Events) != 0 || updated.URL != created.URL {
		t.Fatalf("updateWebhook = %+v", updated)
	}
	if r := do(t, env, admin, `mutation($id: Int!) { testWebhook(id: $id) }`, map[string]any{"id": created.ID}); r.code(t) != "conflict" {
		t.Fatalf("testWebhook of a disabled webhook: %s", r.raw)
	}
	do(t, env, admin, `mutation($id: Int!) { updateWebhook(id: $id, enabled: true) { id } }`, map[string]any{"id": created.ID}).ok(t)
	var seq int64
	do(t, env, admin, `mutation($id: Int!) { testWebhook(id: $id) }`, map[string]any{"id": created.ID}).ok(t).into(t, "testWebhook", &seq)

	type delivery struct {
		ID, Seq    int64
		EventType  string
		OK         bool
		Status     *int
		DurationMs int64
		Attempt    int
	}
	// The events written while it was disabled are sent first (it resumes from its
	// cursor), then the test event. The deliverer runs beside the requests; the test's
	// deadline bounds the wait.
	var ds []delivery
	for len(ds) == 0 || ds[0].Seq != seq {
		do(t, env, admin, `query($id: Int!) { webhookDeliveries(webhookId: $id, first: 10) { id seq eventType ok status durationMs attempt } }`,
			map[string]any{"id": created.ID}).ok(t).into(t, "webhookDeliveries", &ds)
	}
	if ds[0].Seq != seq || ds[0].EventType != "webhook.test" || !ds[0].OK || *ds[0].Status != 204 || ds[0].Attempt != 1 {
		t.Fatalf("webhookDeliveries = %+v", ds)
	}
	var again delivery
	do(t, env, admin, `mutation($id: Int!) { redeliver(deliveryId: $id) { id seq ok attempt } }`, map[string]any{"id": ds[0].ID}).ok(t).into(t, "redeliver", &again)
	if again.Seq != seq || !again.OK || again.Attempt != 0 || again.ID == ds[0].ID {
		t.Fatalf("redeliver = %+v", again)
	}

	for _, bad := range []string{"ftp://example.com/x", "http://user:pw@example.com/x", "/relative", "http://", "not a url", "https://example.com/#frag"} {
		if r := do(t, env, admin, `mutation($u: String!) { createWebhook(url: $u) { id } }`, map[string]any{"u": bad}); r.code(t) != "invalid_argument" {
			t.Fatalf("createWebhook(%q): %s", bad, r.raw)
		}
	}
	if r := do(t, env, admin, `mutation { createWebhook(url: "http://127.0.0.1:1/x", events: ["Task Created"]) { id } }`, nil); r.code(t) != "invalid_argument" {
		t.Fatalf("a bad event type: %s", r.raw)
	}
	member := env.Token(t, pid, auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite)
	if r := do(t, env, member, `{ webhooks { id } }`, nil); r.code(t) != "forbidden" {
		t.Fatalf("webhooks without admin: %s", r.raw)
	}
	if r := do(t, env, member, `mutation { createWebhook(url: "http://127.0.0.1:1/x") { id } }`, nil); r.code(t) != "forbidden" {
		t.Fatalf("createWebhook without admin: %s", r.raw)
	}
	other := env.NewProject(t, "other")
	otherAdmin := env.Token(t, other.ID, allScopes...)
	if r := do(t, env, otherAdmin, `mutation($id: Int!) { deleteWebhook(id: $id) }`, map[string]any{"id": created.ID}); r.code(t) != "not_found" {
		t.Fatalf("another project's webhook: %s", r.raw)
	}
	if r := do(t, env, otherAdmin, `mutation($id: Int!) { redeliver(deliveryId: $id) { id } }`, map[string]any{"id": ds[0].ID}); r.code(t) != "not_found" {
		t.Fatalf("another project's delivery: %s", r.raw)
	}
	var deleted bool
	do(t, env, admin, `mutation($id: Int!) { deleteWebhook(id: $id) }`, map[string]any{"id": created.ID}).ok(t).into(t, "deleteWebhook", &deleted)
	if r := do(t, env, admin, `query($id: Int!) { webhookDeliveries(webhookId: $id) { id } }`, map[string]any{"id": created.ID}); !deleted || r.code(t) != "not_found" {
		t.Fatalf("after deleteWebhook: %s", r.raw)
	}
}

// Webhooks reach the public internet only: a URL whose host is or resolves to a
// loopback, private, link-local, CGNAT or unspecified address is refused at creation,
// saying how the operator allows it; a public address is accepted.
func TestWebhookURLPublicOnly(t *testing.T) { pgtest.Engines(t, testWebhookURLPublicOnly) }

func testWebhookURLPublicOnly(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine) // as agentdesk --serve runs by default
	admin := env.Token(t, env.Project.ID, allScopes...)
	create := `mutation($u: String!) { createWebhook(url: $u) { id } }`
	for url, want := range map[string]string{
		"http://127.0.0.1:8080/hook":               "url: 127.0.0.1 is a loopback address",
		"http://127.9.9.9/hook":                    "url: 127.9.9.9 is a loopback address",
		"http://10.0.0.5/hook":                     "url: 10.0.0.5 is a private address",
		"http://172.16.3.4/hook":                   "url: 172.16.3.4 is a private address",
		"https://192.168.1.10/hook":                "url: 192.168.1.10 is a private address",
		"http://169.254.169.254/latest/meta-data/": "url: 169.254.169.254 is a link-local address",
		"http://100.64.0.1/hook":                   "url: 100.64.0.1 is a shared (CGNAT) address",
		"http://100.127.255.254/hook":              "url: 100.127.255.254 is a shared (CGNAT) address",
		"http://0.0.0.0:8080/hook":                 "url: 0.0.0.0 is an unspecified address",
		"http://[::1]:8080/hook":                   "url: ::1 is a loopback address",
		"http://[::ffff:127.0.0.1]/hook":           "url: 127.0.0.1 is a loopback address",
		"http://[fc00::1]/hook":                    "url: fc00::1 is a private address",
		"http://[fd12:3456::1]/hook":               "url: fd12:3456::1 is a private address",
		"http://[fe80::1]/hook":                    "url: fe80::1 is a link-local address",
		"http://[::]/hook":                         "url: :: is an unspecified address",
		"http://localhost:8080/hook":               "url: localhost resolves to ",
		"http://LOCALHOST/hook":                    "url: LOCALHOST resolves to ",
	} {
		r := do(t, env, admin, create, map[string]any{"u": url})
		if r.code(t) != "invalid_argument" {
			t.Fatalf("createWebhook(%q): %s, want invalid_argument", url, r.raw)
		}
		if msg := r.Errors[0].Message; !strings.HasPrefix(msg, want) || !strings.Contains(msg, "--webhooks-allow-private") {
			t.Fatalf("createWebhook(%q): %q, want %q... naming --webhooks-allow-private", url, msg, want)
		}
	}
	// Public addresses, next to the refused ranges, are accepted (for task.created only,
	// which this test never writes: nothing is sent to them).
	for _, url := range []string{"https://192.0.2.10/hook", "http://100.128.0.1/hook", "http://172.32.0.1/hook", "https://[2001:db8::1]/hook"} {
		do(t, env, admin, `mutation($u: String!) { createWebhook(url: $u, events: ["task.created"]) { id } }`, map[string]any{"u": url}).ok(t)
	}
}
