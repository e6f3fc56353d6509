package service_test

import (
	"context"
	"testing"

	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// openService runs a service on a new database in a temporary directory, closed when
// the test ends; it has no project yet.
func openService(t *testing.T, engine string) *service.Service {
	t.Helper()
	st := testenv.OpenStore(t, engine, store.Options{Synchronous: "NORMAL"})
	svc := service.New(st, service.Options{})
	t.Cleanup(func() {
		svc.Close()
		st.Close()
	})
	return svc
}

// newService is openService with the Personal project, as on a first start.
func newService(t *testing.T, engine string) *service.Service {
	t.Helper()
	svc := openService(t, engine)
	if err := svc.EnsureDefaultProject(context.Background()); err != nil {
		t.Fatal(err)
	}
	return svc
}
