package api_test

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"slices"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/api"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// oaConversationScenarios cover the Conversations REST routes.
func oaConversationScenarios() []oaCase {
	const convs = "/api/projects/{project}/conversations"
	huge := strings.Repeat("x", api.MaxJSONBody+1)
	longMessage := strings.Repeat("m", service.MaxMessageLen+1)
	file := func(name, ctype, content string) [4]string { return [4]string{"file", name, ctype, content} }
	notes, notesHeader := oaMultipart(file("more-notes.txt", "text/plain", "more notes"))
	convIs := func(want func(h *oaHarness, v model.Conversation) error) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return oaIs(func(h *oaHarness, v model.Conversation) error {
			if v.ID < 1 || v.UUID == "" || v.ProjectID != h.project || v.CreatedAt.IsZero() {
				return errors.New("not a conversation of the project")
			}
			return want(h, v)
		})
	}
	named := func(name string, participants ...string) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return convIs(func(_ *oaHarness, v model.Conversation) error {
			if (name == "") != (v.Name == nil) || (v.Name != nil && *v.Name != name) || !slices.Equal(v.Participants, participants) {
				return fmt.Errorf("want name %q and participants %v", name, participants)
			}
			return nil
		})
	}
	msgIs := func(author, authorType, content string) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return oaIs(func(h *oaHarness, v model.Message) error {
			agent := authorType == model.ActorAgent
			if v.ConversationID != h.conv.ID || v.Author != author || v.AuthorType != authorType || v.Content != content ||
				v.Reactions == nil || len(v.Reactions) != 0 || (v.AgentID != nil) != agent || (agent && *v.AgentID != h.agent.ID) {
				return fmt.Errorf("not a new message %q of %s %s in the conversation", content, authorType, author)
			}
			return nil
		})
	}
	docIs := func(name, mimeType, uploadedBy string, size int64) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return oaIs(func(h *oaHarness, v model.Document) error {
			url := fmt.Sprintf("/api/projects/%s/conversations/%d/documents/%d", h.project, h.conv.ID, v.ID)
			if v.Name != name || (mimeType != "" && v.MimeType != mimeType) || v.UploadedBy != uploadedBy || v.Size != size ||
				v.ConversationID != h.conv.ID || v.URL != url || v.CreatedAt.IsZero() {
				return fmt.Errorf("not the document %s (%s, %d bytes, by %s) at %s", name, mimeType, size, uploadedBy, url)
			}
			return nil
		})
	}
	createKey := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		key := map[string]string{"Idempotency-Key": "oa-conv-1"}
		again := h.call(t, oaCase{method: "POST", path: convs, auth: "mw", body: `{"name":"idem", "content":"once"}`, header: key, status: 201}, ids)
		if !bytes.Equal(again.body, r.body) {
			t.Errorf("the replay answered %s, the first answer was %s", again.body, r.body)
		}
		h.call(t, oaCase{method: "POST", path: convs, auth: "mw", body: `{"message":"other"}`, header: key, status: 409, code: "conflict"}, ids)
	}
	postKey := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		key := map[string]string{"Idempotency-Key": "oa-message-1"}
		again := h.call(t, oaCase{method: "POST", path: convs + "/{convUUID}/messages", auth: "mw", body: `{"content":"only once"}`, header: key, status: 201}, ids)
		if !bytes.Equal(again.body, r.body) {
			t.Errorf("the replay by uuid answered %s, the first answer was %s", again.body, r.body)
		}
		h.call(t, oaCase{method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message":"another text"}`, header: key, status: 409, code: "conflict"}, ids)
		h.call(t, oaCase{method: "POST", path: convs + "/{emptyConv}/messages", auth: "mw", body: `{"message":"only once"}`, header: key, status: 409, code: "conflict"}, ids)
	}
	download := func(body, filename string, extended bool) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return func(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
			disp := r.header.Get("Content-Disposition")
			kind, params, err := mime.ParseMediaType(disp)
			if string(r.body) != body || r.header.Get("Content-Type") != "text/plain" || err != nil || kind != "attachment" ||
				params["filename"] != filename || strings.Contains(disp, "filename*=") != extended {
				t.Errorf("download %q (%s), Content-Disposition %q (%v): want %q as attachment %q", r.body, r.header.Get("Content-Type"), disp, err, body, filename)
			}
		}
	}
	linked := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		oaNoConversationInLists(t, h, r, ids)
		items := r.list(t)
		for _, item := range items {
			if item["conversation_id"] != float64(h.conv.ID) {
				t.Errorf("task %v is linked to %v, not to the conversation", item["id"], item["conversation_id"])
			}
		}
		if len(items) < 3 {
			t.Errorf("%d linked tasks, want at least 3", len(items))
		}
	}
	upload := func(c oaCase, body string, header map[string]string) oaCase {
		c.method, c.body, c.header = "POST", body, header
		return c
	}
	noFile, noFileHeader := oaMultipart([4]string{"attachment", "a.txt", "text/plain", "x"})
	withComment, withCommentHeader := oaMultipart([4]string{"comment", "", "", "see attached"}, file("plan-2.md", "text/markdown", "# plan"))
	byExtension, byExtensionHeader := oaMultipart(file("data.json", "", `{"a":1}`))
	disguised, disguisedHeader := oaMultipart(file("..\\evil/\u202etxt.exe", "application/octet-stream", "MZ"))
	overLimit, overLimitHeader := oaMultipart(file("big.bin", "application/octet-stream", strings.Repeat("\x00", service.MaxDocumentSize+1)))
	farOver, farOverHeader := oaMultipart(file("bigger.bin", "application/octet-stream", strings.Repeat("\x00", service.MaxDocumentSize+2<<20)))
	malformedHeader := map[string]string{"Content-Type": "multipart/form-data; boundary=nope"}

	return []oaCase{
		// POST /api/projects/{projectId}/conversations
		{name: "conversation create", method: "POST", path: convs, auth: "mw", body: `{"message":"hi"}`, status: 201, check: named("", "test")},
		{name: "conversation create named", method: "POST", path: convs, auth: "msg", body: `{"message":"hi","name":"plans"}`, status: 201, check: named("plans", "test")},
		{name: "conversation create with content", method: "POST", path: convs, auth: "mw", body: `{"content":"hi"}`, status: 201},
		{name: "conversation create with message and content alike", method: "POST", path: convs, auth: "mw", body: `{"message":"hi","content":"hi"}`, status: 201},
		{name: "conversation create blank name", method: "POST", path: convs, auth: "mw", body: `{"message":"hi","name":"  "}`, status: 201, check: named("", "test")},
		{name: "conversation create null name", method: "POST", path: convs, auth: "mw", body: `{"message":"hi","name":null}`, status: 201, check: named("", "test")},
		{name: "conversation create longest message", method: "POST", path: convs, auth: "mw", body: `{"message":"` + longMessage[1:] + `"}`, status: 201},
		{name: "conversation create by agent", method: "POST", path: convs, auth: "agent", body: `{"message":"hi"}`, status: 201, check: named("", oaAgentName)},
		{name: "conversation create ignores unknown fields", method: "POST", path: convs, auth: "mw", body: `{"message":"hi","colour":1}`, status: 201},
		{name: "conversation create idempotent", method: "POST", path: convs, auth: "mw", body: `{"message":"once","name":"idem"}`,
			header: map[string]string{"Idempotency-Key": "oa-conv-1"}, status: 201, check: createKey},
		{name: "conversation create message and content differ", method: "POST", path: convs, auth: "mw", body: `{"message":"hi","content":"ho"}`, status: 400, code: "invalid_argument"},
		{name: "conversation create missing message", method: "POST", path: convs, auth: "mw", body: `{"name":"x"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create null message", method: "POST", path: convs, auth: "mw", body: `{"message":null}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create blank message", method: "POST", path: convs, auth: "mw", body: `{"message":"  "}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create message wrong type", method: "POST", path: convs, auth: "mw", body: `{"message":5}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create message too long", method: "POST", path: convs, auth: "mw", body: `{"message":"` + longMessage + `"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create name too long", method: "POST", path: convs, auth: "mw", body: `{"message":"hi","name":"` + strings.Repeat("n", service.MaxConversationNameLen+1) + `"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create malformed JSON", method: "POST", path: convs, auth: "mw", body: `{"message":`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create not an object", method: "POST", path: convs, auth: "mw", body: `["hi"]`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create without body", method: "POST", path: convs, auth: "mw", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create bad Idempotency-Key", method: "POST", path: convs, auth: "mw", body: `{"message":"hi"}`, header: map[string]string{"Idempotency-Key": "a b"}, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation create no credentials", method: "POST", path: convs, auth: "none", body: `{"message":"hi"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversation create wrong token", method: "POST", path: convs, auth: "raw:Bearer adk_0000000000000000000000000000000000000000", body: `{"message":"hi"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversation create wrong digest", method: "POST", path: convs, auth: "agent-bad-digest", body: `{"message":"hi"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversation create agent of another project", method: "POST", path: convs, auth: "agent-other", body: `{"message":"hi"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversation create without messaging:write", method: "POST", path: convs, auth: "mr", body: `{"message":"hi"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversation create task token", method: "POST", path: convs, auth: "rw", body: `{"message":"hi"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversation create data token", method: "POST", path: convs, auth: "data", body: `{"message":"hi"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversation create in another project", method: "POST", path: "/api/projects/{otherProject}/conversations", auth: "mw", body: `{"message":"hi"}`, status: 404, code: "not_found"},
		{name: "conversation create body over 1 MiB", method: "POST", path: convs, auth: "mw", body: `{"message":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// GET /api/projects/{projectId}/conversations
		{name: "conversations list", method: "GET", path: convs, auth: "mr", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, _ map[string]int64) {
				items := r.list(t)
				if len(items) < 3 || items[0]["id"] != float64(h.conv.ID) || items[0]["name"] != "general" || items[1]["name"] != nil {
					t.Errorf("the list does not start with the fixtures, oldest first: %.500s", r.body)
				}
			}},
		{name: "conversations list as agent", method: "GET", path: convs, auth: "agent", status: 200},
		{name: "conversations list pages with Link", method: "GET", path: convs + "?limit=1", auth: "mr", status: 200, check: oaPages("mr", convs)},
		{name: "conversations list after_id", method: "GET", path: convs + "?after_id={conv}&limit=1000", auth: "mr", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, _ map[string]int64) {
				if items := r.list(t); len(items) == 0 || items[0]["id"] != float64(h.emptyConv.ID) {
					t.Errorf("after_id did not start after the conversation: %.300s", r.body)
				}
			}},
		{name: "conversations list limit 0", method: "GET", path: convs + "?limit=0", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversations list limit 1001", method: "GET", path: convs + "?limit=1001", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversations list after_id not a number", method: "GET", path: convs + "?after_id=x", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversations list negative after_id", method: "GET", path: convs + "?after_id=-1", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversations list no credentials", method: "GET", path: convs, auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversations list wrong digest", method: "GET", path: convs, auth: "agent-bad-digest", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversations list without messaging:read", method: "GET", path: convs, auth: "mw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversations list task token", method: "GET", path: convs, auth: "ro", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversations list another project", method: "GET", path: "/api/projects/{otherProject}/conversations", auth: "mr", status: 404, code: "not_found"},

		// GET /api/projects/{projectId}/conversations/{conversationId}
		{name: "conversation get by id", method: "GET", path: convs + "/{conv}", auth: "mr", status: 200, check: named("general", "owner")},
		{name: "conversation get by uuid as agent", method: "GET", path: convs + "/{convUUID}", auth: "agent", status: 200,
			check: convIs(func(h *oaHarness, v model.Conversation) error {
				if v.ID != h.conv.ID || v.UUID != h.conv.UUID {
					return errors.New("not the conversation of the uuid")
				}
				return nil
			})},
		{name: "conversation get no credentials", method: "GET", path: convs + "/{conv}", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversation get unknown agent", method: "GET", path: convs + "/{conv}", auth: "agent-unknown", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversation get without messaging:read", method: "GET", path: convs + "/{conv}", auth: "mw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversation get data token", method: "GET", path: convs + "/{conv}", auth: "data", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversation get unknown", method: "GET", path: convs + "/999999", auth: "mr", status: 404, code: "not_found"},
		{name: "conversation get unknown uuid", method: "GET", path: convs + "/00000000-0000-4000-8000-000000000000", auth: "mr", status: 404, code: "not_found"},
		{name: "conversation get neither id nor uuid", method: "GET", path: convs + "/abc", auth: "mr", req: oaInvalid, status: 404, code: "not_found"},
		{name: "conversation get of another project", method: "GET", path: convs + "/{otherConv}", auth: "mr", status: 404, code: "not_found"},
		{name: "conversation get uuid of another project", method: "GET", path: convs + "/{otherConvUUID}", auth: "agent", status: 404, code: "not_found"},
		{name: "conversation get via another project", method: "GET", path: "/api/projects/{otherProject}/conversations/{otherConv}", auth: "mr", status: 404, code: "not_found"},

		// POST .../conversations/{conversationId}/messages
		{name: "message post", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message":"more"}`, status: 201, check: msgIs("test", "user", "more")},
		{name: "message post by uuid", method: "POST", path: convs + "/{convUUID}/messages", auth: "msg", body: `{"message":"by uuid"}`, status: 201, check: msgIs("test", "user", "by uuid")},
		{name: "message post as content", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"content":"via content"}`, status: 201, check: msgIs("test", "user", "via content")},
		{name: "message post by agent", method: "POST", path: convs + "/{conv}/messages", auth: "agent", body: `{"message":"done"}`, status: 201,
			check: func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
				msgIs(oaAgentName, "agent", "done")(t, h, r, ids)
				h.call(t, oaCase{method: "GET", path: convs + "/{conv}", auth: "mr", status: 200,
					check: convIs(func(_ *oaHarness, v model.Conversation) error {
						if !slices.Contains(v.Participants, oaAgentName) {
							return errors.New("the posting agent did not become a participant")
						}
						return nil
					})}, ids)
			}},
		{name: "message post idempotent", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message":"only once"}`,
			header: map[string]string{"Idempotency-Key": "oa-message-1"}, status: 201, check: postKey},
		{name: "message post message and content differ", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message":"a","content":"b"}`, status: 400, code: "invalid_argument"},
		{name: "message post missing message", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "message post blank", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"content":"\n"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "message post malformed JSON", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message"`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "message post too long", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message":"` + longMessage + `"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "message post bad Idempotency-Key", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message":"x"}`, header: map[string]string{"Idempotency-Key": "é"}, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "message post no credentials", method: "POST", path: convs + "/{conv}/messages", auth: "none", body: `{"message":"x"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "message post wrong digest", method: "POST", path: convs + "/{conv}/messages", auth: "agent-bad-digest", body: `{"message":"x"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "message post without messaging:write", method: "POST", path: convs + "/{conv}/messages", auth: "mr", body: `{"message":"x"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "message post data token", method: "POST", path: convs + "/{conv}/messages", auth: "data", body: `{"message":"x"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "message post unknown conversation", method: "POST", path: convs + "/999999/messages", auth: "mw", body: `{"message":"x"}`, status: 404, code: "not_found"},
		{name: "message post neither id nor uuid", method: "POST", path: convs + "/general/messages", auth: "mw", body: `{"message":"x"}`, req: oaInvalid, status: 404, code: "not_found"},
		{name: "message post conversation of another project", method: "POST", path: convs + "/{otherConv}/messages", auth: "mw", body: `{"message":"x"}`, status: 404, code: "not_found"},
		{name: "message post via another project", method: "POST", path: "/api/projects/{otherProject}/conversations/{otherConvUUID}/messages", auth: "mw", body: `{"message":"x"}`, status: 404, code: "not_found"},
		{name: "message post body over 1 MiB", method: "POST", path: convs + "/{conv}/messages", auth: "mw", body: `{"message":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// GET .../conversations/{conversationId}/messages
		{name: "messages list", method: "GET", path: convs + "/{conv}/messages", auth: "mr", status: 200,
			check: func(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
				items := r.list(t)
				if len(items) < 3 || items[0]["content"] != "hello" || items[1]["content"] != "second" || items[2]["content"] != "third" {
					t.Errorf("the messages are not the conversation's, oldest first: %.500s", r.body)
				}
			}},
		{name: "messages list by uuid as agent", method: "GET", path: convs + "/{convUUID}/messages", auth: "agent", status: 200},
		{name: "messages list pages with Link", method: "GET", path: convs + "/{conv}/messages?limit=1", auth: "mr", status: 200, check: oaPages("mr", convs+"/{conv}/messages")},
		{name: "messages list of a new conversation", method: "GET", path: convs + "/{emptyConv}/messages", auth: "mr", status: 200, check: oaLen(1, 1)},
		{name: "messages list limit not a number", method: "GET", path: convs + "/{conv}/messages?limit=abc", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "messages list negative after_id", method: "GET", path: convs + "/{conv}/messages?after_id=-1", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "messages list no credentials", method: "GET", path: convs + "/{conv}/messages", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "messages list without messaging:read", method: "GET", path: convs + "/{conv}/messages", auth: "mw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "messages list task token", method: "GET", path: convs + "/{conv}/messages", auth: "rw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "messages list unknown conversation", method: "GET", path: convs + "/424242/messages", auth: "mr", status: 404, code: "not_found"},
		{name: "messages list conversation of another project", method: "GET", path: convs + "/{otherConvUUID}/messages", auth: "mr", status: 404, code: "not_found"},

		// PUT .../conversations/{conversationId}/read
		{name: "conversation mark read", method: "PUT", path: convs + "/{conv}/read", auth: "mr", body: `{"lastReadMessageId":{convMessage}}`, status: 204,
			check: func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
				if len(r.body) != 0 {
					t.Errorf("a 204 with a body: %s", r.body)
				}
				h.call(t, oaCase{method: "GET", path: convs, auth: "mr", status: 200, check: func(t *testing.T, h *oaHarness, r *oaResult, _ map[string]int64) {
					items := r.list(t)
					if len(items) == 0 || items[0]["lastReadMessageId"].(float64) < float64(h.convMessage) || items[0]["unread"] == nil {
						t.Errorf("the list does not show the marker at or past %d: %.300s", h.convMessage, r.body)
					}
				}}, ids)
				h.call(t, oaCase{method: "GET", path: convs, auth: "agent", status: 200, check: func(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
					if items := r.list(t); len(items) == 0 || items[0]["unread"] != nil || items[0]["lastReadMessageId"] != nil {
						t.Errorf("an agent's list shows read markers: %.300s", r.body)
					}
				}}, ids)
			}},
		{name: "conversation mark read by uuid, ignoring unknown fields", method: "PUT", path: convs + "/{convUUID}/read", auth: "msg", body: `{"lastReadMessageId":{convMessage},"colour":1}`, status: 204},
		{name: "conversation mark read message of another conversation", method: "PUT", path: convs + "/{conv}/read", auth: "mr", body: `{"lastReadMessageId":{emptyConvMessage}}`, status: 400, code: "invalid_argument"},
		{name: "conversation mark read message of another project", method: "PUT", path: convs + "/{conv}/read", auth: "mr", body: `{"lastReadMessageId":{otherConvMessage}}`, status: 400, code: "invalid_argument"},
		{name: "conversation mark read unknown message", method: "PUT", path: convs + "/{conv}/read", auth: "mr", body: `{"lastReadMessageId":999999}`, status: 400, code: "invalid_argument"},
		{name: "conversation mark read zero", method: "PUT", path: convs + "/{conv}/read", auth: "mr", body: `{"lastReadMessageId":0}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation mark read wrong type", method: "PUT", path: convs + "/{conv}/read", auth: "mr", body: `{"lastReadMessageId":"1"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation mark read missing id", method: "PUT", path: convs + "/{conv}/read", auth: "mr", body: `{}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation mark read malformed JSON", method: "PUT", path: convs + "/{conv}/read", auth: "mr", body: `{"lastReadMessageId":`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation mark read without body", method: "PUT", path: convs + "/{conv}/read", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation mark read no credentials", method: "PUT", path: convs + "/{conv}/read", auth: "none", body: `{"lastReadMessageId":{convMessage}}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversation mark read without messaging:read", method: "PUT", path: convs + "/{conv}/read", auth: "mw", body: `{"lastReadMessageId":{convMessage}}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversation mark read by agent", method: "PUT", path: convs + "/{conv}/read", auth: "agent", body: `{"lastReadMessageId":{convMessage}}`, status: 403, code: "forbidden"},
		{name: "conversation mark read of another project", method: "PUT", path: convs + "/{otherConv}/read", auth: "mr", body: `{"lastReadMessageId":{otherConvMessage}}`, status: 404, code: "not_found"},
		{name: "conversation mark read body over 1 MiB", method: "PUT", path: convs + "/{conv}/read", auth: "mr", body: `{"x":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// GET .../conversations/{conversationId}/tasks
		{name: "conversation tasks", method: "GET", path: convs + "/{conv}/tasks", auth: "all", status: 200, check: linked},
		{name: "conversation tasks by uuid as agent", method: "GET", path: convs + "/{convUUID}/tasks", auth: "agent", status: 200, check: linked},
		{name: "conversation tasks pages with Link", method: "GET", path: convs + "/{conv}/tasks?limit=1", auth: "all", status: 200, check: oaPages("all", convs+"/{conv}/tasks")},
		{name: "conversation tasks of an unlinked conversation", method: "GET", path: convs + "/{emptyConv}/tasks", auth: "all", status: 200, check: oaLen(0, 0)},
		{name: "conversation tasks bad limit", method: "GET", path: convs + "/{conv}/tasks?limit=-5", auth: "all", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "conversation tasks no credentials", method: "GET", path: convs + "/{conv}/tasks", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "conversation tasks without task:read", method: "GET", path: convs + "/{conv}/tasks", auth: "msg", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversation tasks without messaging:read", method: "GET", path: convs + "/{conv}/tasks", auth: "rw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "conversation tasks unknown conversation", method: "GET", path: convs + "/777/tasks", auth: "all", status: 404, code: "not_found"},
		{name: "conversation tasks of another project", method: "GET", path: convs + "/{otherConv}/tasks", auth: "all", status: 404, code: "not_found"},

		// POST .../conversations/{conversationId}/documents
		upload(oaCase{name: "document upload", path: convs + "/{conv}/documents", auth: "mw", status: 201,
			check: docIs("more-notes.txt", "text/plain", "test", 10)}, notes, notesHeader),
		upload(oaCase{name: "document upload by agent via uuid", path: convs + "/{convUUID}/documents", auth: "agent", status: 201,
			check: func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
				docIs("more-notes.txt", "text/plain", oaAgentName, 10)(t, h, r, ids)
				h.call(t, oaCase{method: "GET", path: convs + "/{conv}", auth: "mr", status: 200,
					check: convIs(func(_ *oaHarness, v model.Conversation) error {
						if !slices.Contains(v.Participants, oaAgentName) {
							return errors.New("the uploading agent did not become a participant")
						}
						return nil
					})}, ids)
			}}, notes, notesHeader),
		upload(oaCase{name: "document upload with other parts", path: convs + "/{conv}/documents", auth: "msg", status: 201,
			check: docIs("plan-2.md", "text/markdown", "test", 6)}, withComment, withCommentHeader),
		upload(oaCase{name: "document upload type from the extension", path: convs + "/{conv}/documents", auth: "mw", status: 201,
			check: docIs("data.json", "application/json", "test", 7)}, byExtension, byExtensionHeader),
		upload(oaCase{name: "document upload sanitised name", path: convs + "/{conv}/documents", auth: "mw", status: 201,
			check: docIs("txt.exe", "", "test", 2)}, disguised, disguisedHeader),
		upload(oaCase{name: "document upload without a file part", path: convs + "/{conv}/documents", auth: "mw", req: oaInvalid, status: 400, code: "invalid_argument"}, noFile, noFileHeader),
		upload(oaCase{name: "document upload as JSON", path: convs + "/{conv}/documents", auth: "mw", req: oaInvalid, status: 400, code: "invalid_argument"}, `{"file":"x"}`, nil),
		upload(oaCase{name: "document upload malformed multipart", path: convs + "/{conv}/documents", auth: "mw", req: oaInvalid, status: 400, code: "invalid_argument"}, "--nope\r\njunk", malformedHeader),
		upload(oaCase{name: "document upload no credentials", path: convs + "/{conv}/documents", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"}, notes, notesHeader),
		upload(oaCase{name: "document upload wrong digest", path: convs + "/{conv}/documents", auth: "agent-bad-digest", req: oaInvalid, status: 401, code: "unauthenticated"}, notes, notesHeader),
		upload(oaCase{name: "document upload without messaging:write", path: convs + "/{conv}/documents", auth: "mr", req: oaInvalid, status: 403, code: "forbidden"}, notes, notesHeader),
		upload(oaCase{name: "document upload unknown conversation", path: convs + "/31337/documents", auth: "mw", status: 404, code: "not_found"}, notes, notesHeader),
		upload(oaCase{name: "document upload conversation of another project", path: convs + "/{otherConv}/documents", auth: "mw", status: 404, code: "not_found"}, notes, notesHeader),
		upload(oaCase{name: "document upload over 25 MiB", path: convs + "/{conv}/documents", auth: "mw", status: 413, code: "payload_too_large"}, overLimit, overLimitHeader),
		upload(oaCase{name: "document upload body over the upload limit", path: convs + "/{conv}/documents", auth: "mw", status: 413, code: "payload_too_large"}, farOver, farOverHeader),

		// GET .../conversations/{conversationId}/documents
		{name: "documents list", method: "GET", path: convs + "/{conv}/documents", auth: "mr", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, _ map[string]int64) {
				items := r.list(t)
				if len(items) < 3 || items[0]["id"] != float64(h.doc) || items[0]["name"] != "notes.txt" || items[0]["size"] != float64(10) {
					t.Errorf("the documents are not the conversation's, oldest first: %.500s", r.body)
				}
			}},
		{name: "documents list by uuid as agent", method: "GET", path: convs + "/{convUUID}/documents", auth: "agent", status: 200},
		{name: "documents list pages with Link", method: "GET", path: convs + "/{conv}/documents?limit=1", auth: "mr", status: 200, check: oaPages("mr", convs+"/{conv}/documents")},
		{name: "documents list of a conversation without documents", method: "GET", path: convs + "/{emptyConv}/documents", auth: "mr", status: 200, check: oaLen(0, 0)},
		{name: "documents list bad limit", method: "GET", path: convs + "/{conv}/documents?limit=0", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "documents list no credentials", method: "GET", path: convs + "/{conv}/documents", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "documents list without messaging:read", method: "GET", path: convs + "/{conv}/documents", auth: "mw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "documents list unknown conversation", method: "GET", path: convs + "/555/documents", auth: "mr", status: 404, code: "not_found"},

		// GET .../conversations/{conversationId}/documents/{docId}
		{name: "document download", method: "GET", path: convs + "/{conv}/documents/{doc}", auth: "mr", status: 200, check: download("some notes", "notes.txt", false)},
		{name: "document download by uuid as agent", method: "GET", path: convs + "/{convUUID}/documents/{doc}", auth: "agent", status: 200, check: download("some notes", "notes.txt", false)},
		{name: "document download non-ASCII name", method: "GET", path: convs + "/{conv}/documents/{docUnicode}", auth: "mr", status: 200, check: download("some notes", "résumé.txt", true)},
		{name: "document download id not an integer", method: "GET", path: convs + "/{conv}/documents/abc", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "document download id 0", method: "GET", path: convs + "/{conv}/documents/0", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "document download no credentials", method: "GET", path: convs + "/{conv}/documents/{doc}", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "document download without messaging:read", method: "GET", path: convs + "/{conv}/documents/{doc}", auth: "mw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "document download unknown document", method: "GET", path: convs + "/{conv}/documents/999999", auth: "mr", status: 404, code: "not_found"},
		{name: "document download via another conversation", method: "GET", path: convs + "/{emptyConv}/documents/{doc}", auth: "mr", status: 404, code: "not_found"},
		{name: "document download from another project", method: "GET", path: "/api/projects/{otherProject}/conversations/{conv}/documents/{doc}", auth: "otherMsg", status: 404, code: "not_found"},
		{name: "document download of another project", method: "GET", path: convs + "/{otherConv}/documents/{otherDoc}", auth: "mr", status: 404, code: "not_found"},
	}
}
