package service_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
)

// The write benchmarks time the service layer and the store without HTTP: 16
// goroutines on a real SQLite file, as `make bench` has 16 clients. They show what one
// write costs the single writer (run with -cpuprofile to see where it goes):
//
//	go test ./backend/service -run '^$' -bench 'Create|Callback' -benchtime 20000x

func benchService(b *testing.B, sync string) (*service.Service, *auth.Principal, *model.Agent) {
	b.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, b.TempDir()+"/agentdesk.db", store.Options{Synchronous: sync})
	if err != nil {
		b.Fatal(err)
	}
	svc := service.New(st, service.Options{})
	b.Cleanup(func() { svc.Close(); st.Close() })
	// The writer's share of each write: running it, and the batch commits, per write.
	start := st.Stats()
	b.Cleanup(func() {
		end := st.Stats()
		writes := float64(end.Writes - start.Writes)
		b.ReportMetric(float64((end.Exec-start.Exec).Microseconds())/writes, "writer-exec-us/op")
		b.ReportMetric(float64((end.Commit-start.Commit).Microseconds())/writes, "writer-commit-us/op")
		b.ReportMetric(writes/float64(end.Batches-start.Batches), "writes/batch")
	})
	if err := svc.EnsureDefaultProject(ctx); err != nil {
		b.Fatal(err)
	}
	projects, err := svc.Projects(ctx, auth.Owner(""))
	if err != nil {
		b.Fatal(err)
	}
	owner := auth.Owner(projects[0].ID)
	agent, err := svc.CreateAgent(ctx, owner, "bench-agent")
	if err != nil {
		b.Fatal(err)
	}
	return svc, owner, agent
}

func createInput(agentID int64) service.CreateTaskInput {
	return service.CreateTaskInput{Summary: "bench task", Details: "made by the write benchmark",
		Steps: []service.StepInput{{Title: "one"}, {Title: "two"}, {Title: "three"}}, AgentID: &agentID}
}

func BenchmarkCreateTask(b *testing.B) {
	for _, sync := range []string{"NORMAL", "FULL"} {
		b.Run(sync, func(b *testing.B) {
			svc, owner, agent := benchService(b, sync)
			ctx := context.Background()
			b.SetParallelism(8) // 16 goroutines on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := svc.CreateTask(ctx, owner, createInput(agent.ID), ""); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func BenchmarkAgentCallback(b *testing.B) {
	for _, sync := range []string{"NORMAL", "FULL"} {
		b.Run(sync, func(b *testing.B) {
			svc, owner, agent := benchService(b, sync)
			ctx := context.Background()
			const tasks = 16
			ids := make([]int64, tasks)
			for i := range ids {
				task, err := svc.CreateTask(ctx, owner, createInput(agent.ID), "")
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = task.ID
			}
			as := auth.Agent(owner.ProjectID, agent.ID, agent.Name)
			var next atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				id := ids[next.Add(1)%tasks] // each goroutine on a task of its own, as in make bench
				for i := 0; pb.Next(); i++ {
					step, status := i%3, "in_progress"
					if i%2 == 1 {
						status = "completed"
					}
					in := service.CallbackInput{ProjectID: owner.ProjectID, Status: model.StatusDoing,
						Steps: []service.StepUpdate{{Index: &step, Status: status}}}
					if _, err := svc.AgentCallback(ctx, as, id, in, "", nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
