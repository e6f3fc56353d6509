package graphql

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/gorilla/websocket"
	gql "github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/gqlerrors"
	"github.com/graphql-go/graphql/language/ast"
	"github.com/graphql-go/graphql/language/location"
	"github.com/graphql-go/graphql/language/parser"
	"github.com/graphql-go/graphql/language/source"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/events"
	"github.com/agentdesk/agentdesk/backend/service"
)

//go:embed playground.html
var playgroundHTML []byte

// TokenFunc extracts the Bearer token of a request, exactly as REST does (the api
// package passes its own); the token is then authenticated by the service.
type TokenFunc func(r *http.Request) (string, error)

// Request is the body of POST /graphql (and the query parameters of GET).
type Request struct {
	Query         string         `json:"query"`
	Variables     map[string]any `json:"variables"`
	OperationName string         `json:"operationName"`
	Extensions    map[string]any `json:"extensions"` // read (it must be an object) and unused
}

type response struct {
	Data   *any      `json:"data,omitempty"` // set (maybe to null) once execution ran; absent for request errors
	Errors errorList `json:"errors,omitempty"`
}

// Media types of answers: the GraphQL-over-HTTP draft's own when the client asks for it,
// else application/json, which older clients expect.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// wantsGraphQLResponse reports whether an Accept header prefers
// application/graphql-response+json to application/json.
func wantsGraphQLResponse(accept string) bool {
	qGQL, qJSON := 0.0, 0.0
	for _, part := range strings.Split(accept, ",") {
		typ, params, err := mime.ParseMediaType(part)
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		switch typ {
		case mediaGraphQLResponse:
			qGQL = max(qGQL, q)
		case mediaJSON:
			qJSON = max(qJSON, q)
		}
	}
	return qGQL > 0 && qGQL >= qJSON
}

// Option configures Handler.
type Option func(*options)

type options struct {
	hub      *events.Hub
	upgrader *websocket.Upgrader
	page     []byte // GraphiQL's page (WithPage); nil: the plain playground.html
}

// GraphiQLCSP is the Content-Security-Policy of the GraphiQL page (WithPage): its
// scripts and styles are the UI build's files under /assets/ ('self'), no inline
// script; inline styles are allowed because GraphiQL's dialogs and menus write <style>
// elements at run time; its stylesheet embeds its fonts and icons as data: URLs.
const GraphiQLCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// WithPage serves page, the built GraphiQL (the web UI's graphiql.html, which loads its
// bundle from /assets/), to browsers at GET /graphql, under GraphiQLCSP, instead of
// the plain page kept for binaries built without the UI.
func WithPage(page []byte) Option {
	return func(o *options) { o.page = page }
}

// WithEvents serves subscriptions: a WebSocket upgrade of GET /graphql speaks the
// graphql-transport-ws protocol, over hub's stored event stream. upgrader checks the
// browser's origin (events.Upgrader, as for /api/events); the subprotocol is added here.
func WithEvents(hub *events.Hub, upgrader *websocket.Upgrader) Option {
	return func(o *options) {
		up := *upgrader
		up.Subprotocols = []string{Subprotocol}
		o.hub, o.upgrader = hub, &up
	}
}

// Handler serves /graphql: POST runs a query or mutation; GET runs a query given in the
// query string, or, for a browser (Accept: text/html), serves a small page to try
// queries in; a WebSocket upgrade (with WithEvents) serves subscriptions. Callers
// authenticate with a Bearer token, as on REST.
func Handler(svc *service.Service, token TokenFunc, opts ...Option) http.Handler {
	schema, err := NewSchema(svc)
	if err != nil {
		panic("graphql schema: " + err.Error()) // a programming error, caught by every test
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && websocket.IsWebSocketUpgrade(r) {
			if o.hub == nil {
				replyError(w, r, errs.Invalid("this server does not serve GraphQL subscriptions"))
				return
			}
			serveWS(w, r, &schema, svc, o.hub, o.upgrader, token)
			return
		}
		if r.Method == http.MethodGet && r.URL.Query().Get("query") == "" && strings.Contains(r.Header.Get("Accept"), "text/html") {
			w.Header().Set("Cache-Control", "no-store")
			if o.page != nil {
				w.Header().Set("Content-Security-Policy", GraphiQLCSP)
				writeBody(w, http.StatusOK, "text/html; charset=utf-8", o.page)
				return
			}
			writeBody(w, http.StatusOK, "text/html; charset=utf-8", playgroundHTML)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			w.Header().Set("Allow", "GET, POST")
			reply(w, r, http.StatusMethodNotAllowed, response{Errors: errorList{gqlError(errs.InvalidArgument, "use POST /graphql (or GET for queries)")}})
			return
		}
		value, err := token(r)
		if err != nil && r.Header.Get("Authorization") == "" {
			err = nil // no token: a browser session's cookie may do (Authenticate decides)
		}
		if err == nil {
			c := service.Credentials{Where: service.WhereGraphQL, Token: value, Address: service.ClientAddress(r.Context())}
			svc.ReadSession(&c, r)
			pr, aerr := svc.Authenticate(r.Context(), c)
			if aerr == nil {
				ctx, _ := withAgentLoader(WithPrincipal(r.Context(), pr), svc, pr)
				ctx = platformContext(ctx, r.Header.Get(audit.ClientHeader), svc, pr, true) // activity.go
				serve(w, r, &schema, ctx)
				return
			}
			err = aerr
		}
		replyError(w, r, err)
	})
}

// authenticate resolves the Bearer token of a /graphql request (HTTP or WebSocket), by
// the service's one rule of credentials (data tokens are for /api/vector only).
func authenticate(ctx context.Context, svc *service.Service, value string) (*auth.Principal, error) {
	return svc.Authenticate(ctx, service.Credentials{Where: service.WhereGraphQL, Token: value, Address: service.ClientAddress(ctx)})
}

// replyError answers a request that failed before execution, with the status REST
// gives the same error.
func replyError(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := errs.Public(err)
	if code == errs.Unauthenticated {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	if secs, ok := errs.RetryAfterSeconds(err); ok {
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	reply(w, r, errs.HTTPStatus(err), response{Errors: errorList{gqlError(code, msg)}})
}

// reply writes an answer in the media type the client asked for. The status is the
// same for both: 4xx for a request that failed before execution (its body has no data),
// 200 once execution ran, as the GraphQL-over-HTTP draft asks of
// application/graphql-response+json (and allows for application/json).
func reply(w http.ResponseWriter, r *http.Request, status int, body response) {
	raw, err := json.Marshal(body)
	if err != nil {
		raw = []byte(`{"errors":[{"message":"internal error; the server log has the details","extensions":{"code":"internal"}}]}`)
		status = http.StatusInternalServerError
	}
	media := mediaJSON
	if wantsGraphQLResponse(r.Header.Get("Accept")) {
		media = mediaGraphQLResponse
	}
	w.Header().Add("Vary", "Accept")
	writeBody(w, status, media+"; charset=utf-8", raw)
}

// writeBody answers body with status and its media type.
func writeBody(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body) // a client that went away is no one's error
}

// readRequest reads the operation from the body (POST) or the query string (GET).
func readRequest(w http.ResponseWriter, r *http.Request) (Request, error) {
	var req Request
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		req.Query = q.Get("query")
		req.OperationName = q.Get("operationName")
		if v := q.Get("variables"); v != "" {
			if err := json.Unmarshal([]byte(v), &req.Variables); err != nil {
				return req, errs.Invalid("variables must be a JSON object")
			}
		}
		if v := q.Get("extensions"); v != "" {
			if err := json.Unmarshal([]byte(v), &req.Extensions); err != nil {
				return req, errs.Invalid("extensions must be a JSON object")
			}
		}
	} else {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != mediaJSON {
			return req, errUnsupportedMedia
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return req, errs.TooLarge("the request body is over %d bytes", MaxBodyBytes)
		}
		if err != nil {
			return req, errs.Invalid("could not read the request body")
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return req, errs.Invalid("the body must be a JSON object with query, and optionally variables and operationName")
		}
	}
	if strings.TrimSpace(req.Query) == "" {
		return req, errs.Invalid("query is required")
	}
	if len(req.Query) > MaxQueryBytes {
		return req, errs.TooLarge("the query is %d bytes, at most %d are allowed", len(req.Query), MaxQueryBytes)
	}
	return req, nil
}

// errUnsupportedMedia answers a POST whose body is not declared JSON: GraphQL over HTTP
// reads only application/json bodies (415, with errors).
var errUnsupportedMedia = errors.New("a POST to /graphql must send Content-Type: application/json")

// requestErrorStatus is the status of an answer with request errors (a document that
// does not parse, is over the limits or invalid; variables that do not fit; an unknown
// operation name): 400 for application/graphql-response+json, and 200 for
// application/json, as GraphQL over HTTP asks (clients of that type read the errors
// from a 200; an intermediary may not pass on the body of a 4xx).
func requestErrorStatus(r *http.Request) int {
	if wantsGraphQLResponse(r.Header.Get("Accept")) {
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// serve parses, checks the limits, validates and executes one request. ctx ends when
// the client goes away: then the operation does not start, and its resolvers' store
// calls are cancelled.
func serve(w http.ResponseWriter, r *http.Request, schema *gql.Schema, ctx context.Context) {
	req, err := readRequest(w, r)
	if err == errUnsupportedMedia {
		reply(w, r, http.StatusUnsupportedMediaType, response{Errors: errorList{gqlError(errs.InvalidArgument, err.Error())}})
		return
	}
	if err != nil {
		replyError(w, r, err)
		return
	}
	doc, list := checkRequest(schema, req.Query, req.Variables)
	if list != nil {
		reply(w, r, requestErrorStatus(r), response{Errors: list})
		return
	}
	op := operation(doc, req.OperationName)
	if op != nil && op.Operation == ast.OperationTypeSubscription {
		replyError(w, r, errs.Invalid("subscriptions are served over WebSocket: connect to ws://…/graphql with the graphql-transport-ws protocol (e.g. the graphql-ws client)"))
		return
	}
	if r.Method == http.MethodGet && op != nil && op.Operation == ast.OperationTypeMutation {
		// GraphQL over HTTP: a mutation over GET is refused with 405.
		w.Header().Set("Allow", "POST")
		reply(w, r, http.StatusMethodNotAllowed, response{Errors: errorList{gqlError(errs.InvalidArgument, "mutations must be sent with POST")}})
		return
	}
	if ctx.Err() != nil {
		return // the client has gone
	}
	res := gql.Execute(gql.ExecuteParams{Schema: *schema, AST: doc, OperationName: req.OperationName, Args: req.Variables, Context: ctx})
	if ctx.Err() != nil {
		return
	}
	if res.Data == nil && requestFailed(res.Errors) {
		// Nothing ran: the variables or the operation name are wrong. A request error,
		// so no data key.
		reply(w, r, requestErrorStatus(r), response{Errors: executionErrors(ctx, res.Errors)})
		return
	}
	reply(w, r, http.StatusOK, response{Data: &res.Data, Errors: executionErrors(ctx, res.Errors)})
}

// checkRequest parses a query, checks the limits and validates it (HTTP and
// WebSocket): it returns the document to execute, or the request errors.
//
// The limits come first: validating an abusive document is what is slow. Validation
// itself runs on a copy parsed without the source text, because graphql-go prints
// values while it validates, through JSON, and every node of a parsed document points
// at the source, so each print would copy the whole document. Its errors' locations
// are put back from their positions. The copy that runs keeps the source, so that
// execution errors say where they are; parsing again costs microseconds.
func checkRequest(schema *gql.Schema, query string, vars map[string]any) (*ast.Document, errorList) {
	src := source.NewSource(&source.Source{Body: []byte(query), Name: "GraphQL request"})
	bare, err := parser.Parse(parser.ParseParams{Source: src, Options: parser.ParseOptions{NoSource: true}})
	if err != nil {
		return nil, requestErrors(gqlerrors.FormatErrors(err)) // located by the parser
	}
	if err := checkLimits(schema, bare, vars); err != nil {
		return nil, errorList{gqlError(errs.InvalidArgument, err.Error())}
	}
	if v := gql.ValidateDocument(schema, bare, nil); !v.IsValid {
		return nil, requestErrors(locate(v.Errors, query))
	}
	doc, err := parser.Parse(parser.ParseParams{Source: src})
	if err != nil {
		return nil, requestErrors(gqlerrors.FormatErrors(err))
	}
	return doc, nil
}

// locate sets the line and column of errors found on a document parsed without its
// source, from their positions in query.
func locate(list []gqlerrors.FormattedError, query string) []gqlerrors.FormattedError {
	var lineStarts []int // offsets where lines begin, after the first
	for i := 0; i < len(query); i++ {
		switch query[i] {
		case '\r':
			if i+1 < len(query) && query[i+1] == '\n' {
				i++
			}
			lineStarts = append(lineStarts, i+1)
		case '\n':
			lineStarts = append(lineStarts, i+1)
		}
	}
	for i := range list {
		e, ok := list[i].OriginalError().(*gqlerrors.Error)
		if !ok || len(e.Positions) == 0 {
			continue
		}
		locs := make([]location.SourceLocation, 0, len(e.Positions))
		for _, pos := range e.Positions {
			line := sort.SearchInts(lineStarts, pos+1) // lines that begin at or before pos
			start := 0
			if line > 0 {
				start = lineStarts[line-1]
			}
			locs = append(locs, location.SourceLocation{Line: line + 1, Column: pos - start + 1})
		}
		list[i].Locations = locs
	}
	return list
}

// requestFailed reports whether Execute stopped before running any field: its errors
// then have no path (variable coercion, an unknown operation name).
func requestFailed(list []gqlerrors.FormattedError) bool {
	for _, e := range list {
		if len(e.Path) > 0 {
			return false
		}
	}
	return len(list) > 0
}
