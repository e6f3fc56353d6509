package client_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/client"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// hammerDuration is how long the agents and users of TestConcurrentAgentsAndUsers run.
const hammerDuration = 20 * time.Second

// TestConcurrentAgentsAndUsers has 8 agents and 8 users hammer one project through the
// SDK for hammerDuration: agents call back on their tasks (step changes, questions,
// messages) and post to a shared conversation; users answer whatever is Waiting and post
// too. Each side records what the server acknowledged. Afterwards the server must hold
// exactly that: no lost or doubled conversation entries or messages, the last step
// status each agent set, a current_step_num that agrees with the steps, and no error
// but the 409s that concurrent answers to one question must produce (an SQLITE_BUSY
// would reach a client as a 500). `make test` also runs it under -race.
func TestConcurrentAgentsAndUsers(t *testing.T) { pgtest.Engines(t, testConcurrentAgentsAndUsers) }

func testConcurrentAgentsAndUsers(t *testing.T, engine string) {
	const agents, users, tasksPerAgent, steps = 8, 8, 3, 5
	env := testenv.StartOn(t, engine)
	ctx := context.Background()
	p := env.Project
	proj, err := env.Service.Project(ctx, auth.Owner(p.ID), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	admin := client.New(env.URL, client.WithHTTPClient(httpc),
		client.WithToken(env.Token(t, p.ID, auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite)))
	conv, err := admin.CreateConversation(ctx, p.ID, "the hammer starts", "hammer")
	if err != nil {
		t.Fatal(err)
	}
	convID := fmt.Sprint(conv.ID)

	// Each agent owns its tasks; only it changes their steps, so its record of the last
	// status it set on each step is what the server must end with.
	type agentState struct {
		c          *client.Client
		name       string
		tasks      []int64
		stepStatus map[int64][]string // task -> last acknowledged status per step
		assistant  map[int64]int      // task -> acknowledged callback messages
		posted     int                // acknowledged conversation messages
	}
	var states []*agentState
	for i := range agents {
		name := fmt.Sprintf("agent-%d", i)
		a := env.Agent(t, p.ID, name)
		st := &agentState{name: name, stepStatus: map[int64][]string{}, assistant: map[int64]int{},
			c: client.New(env.URL, client.WithHTTPClient(httpc),
				client.WithAgent(p.ID, client.AgentDigest(p.ID, proj.TokenSecret), name, p.Namespace))}
		for j := range tasksPerAgent {
			titles := make([]string, steps)
			for k := range titles {
				titles[k] = fmt.Sprintf("step %d", k)
			}
			task, err := admin.CreateTask(ctx, client.NewTask{Summary: fmt.Sprintf("%s task %d", name, j), Steps: titles, AgentID: &a.ID})
			if err != nil {
				t.Fatal(err)
			}
			st.tasks = append(st.tasks, task.ID)
			st.stepStatus[task.ID] = []string{"pending", "pending", "pending", "pending", "pending"}
		}
		states = append(states, st)
	}

	var (
		mu          sync.Mutex
		userAnswers = map[int64]int{} // task -> acknowledged responds
		userPosts   = map[string]int{}
		conflicts   int
	)
	unexpected := func(who string, err error) {
		t.Errorf("%s: %v", who, err)
	}
	deadline := time.Now().Add(hammerDuration)
	var wg sync.WaitGroup
	for _, st := range states {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(len(st.name)), uint64(st.tasks[0])))
			statuses := []string{"pending", "in_progress", "completed", "skipped"}
			for n := 0; time.Now().Before(deadline); n++ {
				task := st.tasks[rnd.IntN(len(st.tasks))]
				switch r := rnd.IntN(10); {
				case r < 6: // a step moves, with a message
					idx, status := rnd.IntN(steps), statuses[rnd.IntN(len(statuses))]
					_, err := st.c.AgentCallback(ctx, task, client.Callback{Status: "Doing",
						Steps: []client.StepUpdate{{Index: idx, Status: status}}, Message: fmt.Sprintf("%s moved step %d to %s (%d)", st.name, idx, status, n)})
					if err != nil {
						unexpected(st.name+" callback", err)
						continue
					}
					st.stepStatus[task][idx] = status
					st.assistant[task]++
				case r < 8: // a question for the humans
					if _, err := st.c.AgentCallback(ctx, task, client.Callback{WaitingDetails: fmt.Sprintf("%s asks %d?", st.name, n)}); err != nil {
						unexpected(st.name+" question", err)
					}
				default:
					if _, err := st.c.SendMessage(ctx, p.ID, convID, fmt.Sprintf("%s says %d", st.name, n)); err != nil {
						unexpected(st.name+" message", err)
						continue
					}
					st.posted++
				}
			}
		}()
	}
	for u := range users {
		name := fmt.Sprintf("user-%d", u)
		c := client.New(env.URL, client.WithHTTPClient(httpc),
			client.WithToken(env.Token(t, p.ID, auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(u), 7))
			for n := 0; time.Now().Before(deadline); n++ {
				if rnd.IntN(4) == 0 {
					if _, err := c.SendMessage(ctx, p.ID, convID, fmt.Sprintf("%s says %d", name, n)); err != nil {
						unexpected(name+" message", err)
						continue
					}
					mu.Lock()
					userPosts[name]++
					mu.Unlock()
					continue
				}
				page, err := c.ListTasks(ctx, client.ListOptions{Status: model.StatusWaiting, Limit: 50})
				if err != nil {
					unexpected(name+" list", err)
					continue
				}
				if len(page.Tasks) == 0 {
					time.Sleep(time.Millisecond)
					continue
				}
				task := page.Tasks[rnd.IntN(len(page.Tasks))]
				_, err = c.Respond(ctx, task.ID, fmt.Sprintf("%s answers v%d", name, task.WaitingVersion), task.WaitingVersion)
				mu.Lock()
				switch {
				case err == nil:
					userAnswers[task.ID]++
				case client.IsCode(err, "conflict"): // another user answered first, or the agent moved on
					conflicts++
				default:
					unexpected(name+" respond", err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	// Every acknowledged change is there, once.
	var callbacks, answers int
	for _, st := range states {
		for _, id := range st.tasks {
			task, err := admin.GetTask(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			var assistant, user int
			for _, e := range task.Conversation {
				switch e.Role {
				case "assistant":
					assistant++
				case "user":
					user++
				}
			}
			if assistant != st.assistant[id] || user != userAnswers[id] {
				t.Errorf("task %d: conversation has %d assistant and %d user entries; the clients were acknowledged %d and %d",
					id, assistant, user, st.assistant[id], userAnswers[id])
			}
			callbacks += st.assistant[id]
			answers += userAnswers[id]
			want := len(task.Steps)
			for i, s := range task.Steps {
				if s.Status != st.stepStatus[id][i] {
					t.Errorf("task %d step %d is %s; its agent last set %s", id, i, s.Status, st.stepStatus[id][i])
				}
				if want == len(task.Steps) && (s.Status == "pending" || s.Status == "in_progress") {
					want = i
				}
			}
			if task.CurrentStepNum != want {
				t.Errorf("task %d: current_step_num %d, but its steps say %d", id, task.CurrentStepNum, want)
			}
		}
	}
	msgs, err := admin.ListMessages(ctx, p.ID, convID, client.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var all []client.Message
	for len(msgs) > 0 {
		all = append(all, msgs...)
		if msgs, err = admin.ListMessages(ctx, p.ID, convID, client.Page{Limit: 1000, AfterID: msgs[len(msgs)-1].ID}); err != nil {
			t.Fatal(err)
		}
	}
	byAuthor := map[string]int{}
	for i, m := range all {
		byAuthor[m.Author]++
		if i > 0 && m.ID <= all[i-1].ID {
			t.Fatalf("messages out of order: %d after %d", m.ID, all[i-1].ID)
		}
	}
	posted := 0
	for _, st := range states {
		if byAuthor[st.name] != st.posted {
			t.Errorf("%s: %d messages stored, %d acknowledged", st.name, byAuthor[st.name], st.posted)
		}
		posted += st.posted
	}
	mu.Lock()
	defer mu.Unlock()
	userTotal := 0
	for _, n := range userPosts {
		userTotal += n
	}
	if got := len(all) - 1 - posted; got != userTotal { // -1: the conversation's first message
		t.Errorf("%d user messages stored, %d acknowledged", got, userTotal)
	}
	if callbacks == 0 || answers == 0 || posted == 0 || userTotal == 0 {
		t.Errorf("the hammer did too little to prove anything: %d callbacks, %d answers, %d agent and %d user messages", callbacks, answers, posted, userTotal)
	}
	t.Logf("in %v: %d callbacks with a message, %d answers (%d conflicts), %d agent and %d user messages",
		hammerDuration, callbacks, answers, conflicts, posted, userTotal)
}
