package service_test

import (
	"context"
	"testing"

	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
)

// openService runs a service on a new database in a temporary directory, closed when
// the test ends; it has no project yet.
func openService(t *testing.T) *service.Service {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir()+"/agentdesk.db", store.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(st, service.Options{})
	t.Cleanup(func() {
		svc.Close()
		st.Close()
	})
	return svc
}

// newService is openService with the Personal project, as on a first start.
func newService(t *testing.T) *service.Service {
	t.Helper()
	svc := openService(t)
	if err := svc.EnsureDefaultProject(context.Background()); err != nil {
		t.Fatal(err)
	}
	return svc
}
