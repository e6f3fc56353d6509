package a2a_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// push is a notification as the receiver got it.
type push struct {
	header http.Header
	body   []byte
	task   a2a.Task
}

// receiver records the push notifications POSTed to it; it answers 500 to the first
// failFirst of them.
func receiver(t *testing.T, failFirst int) (url string, got <-chan push) {
	t.Helper()
	ch := make(chan push, 32)
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p := push{header: r.Header.Clone(), body: body}
		if err := json.Unmarshal(body, &p.task); err != nil {
			t.Errorf("a push that is not a task: %s", body)
		}
		ch <- p
		if n++; n <= failFirst {
			http.Error(w, "not now", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/a2a-push", ch
}

func nextPush(t *testing.T, got <-chan push) push {
	t.Helper()
	select {
	case p := <-got:
		return p
	case <-time.After(15 * time.Second):
		t.Fatal("no push notification")
	}
	return push{}
}

// signedWith checks a push's Standard Webhooks signature against the HMAC-SHA256 of
// "id.timestamp.body" keyed with the config's token.
func signedWith(t *testing.T, p push, token string) {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte(p.header.Get("webhook-id") + "." + p.header.Get("webhook-timestamp") + "."))
	mac.Write(p.body)
	if want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)); p.header.Get("webhook-signature") != want {
		t.Fatalf("signature %q, want %q", p.header.Get("webhook-signature"), want)
	}
	if p.header.Get("X-A2A-Notification-Token") != token {
		t.Fatalf("X-A2A-Notification-Token %q, want %q", p.header.Get("X-A2A-Notification-Token"), token)
	}
}

// TestPushNotifications: the card says pushNotifications; a config set on a task (and
// one given with message/send) is sent the task at each change, signed with its token,
// and retried after a failure with the same webhook-id; get, list and delete; a loopback
// URL is refused without --webhooks-allow-private.
func TestPushNotifications(t *testing.T) {
	backoff := service.WebhookBackoff
	service.WebhookBackoff = []time.Duration{100 * time.Millisecond}
	t.Cleanup(func() { service.WebhookBackoff = backoff })
	w := newWorldOn(t, testenv.StartWith(t, server.Config{WebhooksAllowPrivate: true}), auth.TaskRead, auth.TaskWrite)
	if !w.card.Capabilities.PushNotifications {
		t.Fatal("the card does not say pushNotifications")
	}
	url, got := receiver(t, 1)

	res, err := w.client.SendMessage(w.ctx, userMessage("", "Tidy the changelog"))
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	set, err := w.client.SetTaskPushConfig(w.ctx, &a2a.TaskPushConfig{TaskID: id, Config: a2a.PushConfig{URL: url, Token: "tok-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if set.Config.ID == "" || set.Config.Token != "tok-1" || set.Config.URL != url {
		t.Fatalf("set: %+v", set.Config)
	}
	w.callback(t, id, `"status":"Doing"`)
	first := nextPush(t, got) // answered 500
	again := nextPush(t, got)
	if again.header.Get("webhook-id") != first.header.Get("webhook-id") || again.task.Status.State != a2a.TaskStateWorking || again.task.ID != id {
		t.Fatalf("the retry: %s %+v after %s", again.header.Get("webhook-id"), again.task.Status, first.header.Get("webhook-id"))
	}
	signedWith(t, again, "tok-1")
	w.callback(t, id, `"status":"Waiting","waiting_details":"Which release?"`)
	if p := nextPush(t, got); p.task.Status.State != a2a.TaskStateInputRequired || text(p.task.Status.Message) != "Which release?" {
		t.Fatalf("the question: %+v", p.task.Status)
	}

	c, err := w.client.GetTaskPushConfig(w.ctx, &a2a.GetTaskPushConfigParams{TaskID: id, ConfigID: set.Config.ID})
	if err != nil || c.Config.URL != url {
		t.Fatalf("get: %+v, %v", c, err)
	}
	if list, err := w.client.ListTaskPushConfig(w.ctx, &a2a.ListTaskPushConfigParams{TaskID: id}); err != nil || len(list) != 1 {
		t.Fatalf("list: %+v, %v", list, err)
	}
	if err := w.client.DeleteTaskPushConfig(w.ctx, &a2a.DeleteTaskPushConfigParams{TaskID: id, ConfigID: set.Config.ID}); err != nil {
		t.Fatal(err)
	}
	if list, err := w.client.ListTaskPushConfig(w.ctx, &a2a.ListTaskPushConfigParams{TaskID: id}); err != nil || len(list) != 0 {
		t.Fatalf("list after delete: %+v, %v", list, err)
	}
	if err := w.client.DeleteTaskPushConfig(w.ctx, &a2a.DeleteTaskPushConfigParams{TaskID: id, ConfigID: set.Config.ID}); err == nil {
		t.Fatal("deleted twice")
	}

	// A config given with message/send: a token is made when none is given.
	params := userMessage("", "Draft the announcement")
	params.Config = &a2a.MessageSendConfig{PushConfig: &a2a.PushConfig{ID: "mine", URL: url}}
	res, err = w.client.SendMessage(w.ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	id2 := res.(*a2a.Task).ID
	c, err = w.client.GetTaskPushConfig(w.ctx, &a2a.GetTaskPushConfigParams{TaskID: id2, ConfigID: "mine"})
	if err != nil || c.Config.Token == "" {
		t.Fatalf("the send's config: %+v, %v", c, err)
	}
	w.callback(t, id2, `"status":"Done"`)
	p := nextPush(t, got)
	if p.task.ID != id2 || p.task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the send's push: %+v", p.task)
	}
	signedWith(t, p, c.Config.Token)

	strict := newWorld(t, auth.TaskRead, auth.TaskWrite)
	res, err = strict.client.SendMessage(strict.ctx, userMessage("", "x"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = strict.client.SetTaskPushConfig(strict.ctx, &a2a.TaskPushConfig{TaskID: res.(*a2a.Task).ID, Config: a2a.PushConfig{URL: url}})
	if err == nil || !strings.Contains(err.Error(), "invalid params") {
		t.Fatalf("a loopback URL without --webhooks-allow-private: %v", err)
	}
}
