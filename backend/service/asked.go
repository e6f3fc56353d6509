package service

import (
	"context"
	"slices"
	"strings"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
)

// The person a question asks (the contract's "Questions with structure"): waiting_ask,
// else the person who created the task, else every member who may write tasks. The
// rule is askedOf; PeopleAsked names them by email (notifications, email), asksMe says
// whether it is the caller (the Inbox's "asked you").

// asked is whom a task's question asks: one person, by email or by user id, or every
// member who may write tasks (anyWriter).
type asked struct {
	email     string
	creator   *model.Member
	anyWriter bool
}

// askedOf applies the rule to t (a Waiting task); members lists its project's members,
// read once however many tasks ask (WaitingForList).
func askedOf(t *model.Task, members func() ([]model.Member, error)) (asked, error) {
	if t.WaitingAsk != nil {
		return asked{email: *t.WaitingAsk}, nil
	}
	if t.CreatedBy != nil {
		all, err := members()
		if err != nil {
			return asked{}, internal("list members", err)
		}
		for i, m := range all {
			if m.UserID == *t.CreatedBy && m.Email != nil && slices.Contains(RoleScopes(m.Role), auth.TaskWrite) {
				return asked{creator: &all[i]}, nil
			}
		}
		// The creator left the project, cannot answer any more, or has no email.
	}
	return asked{anyWriter: true}, nil
}

// PeopleAsked is the emails of the people t's question asks: waiting_ask, else the
// task's creator (while a member who may write tasks), else every member who may write
// tasks and has an email. None when t does not wait.
func (s *Service) PeopleAsked(ctx context.Context, t *model.Task) ([]string, error) {
	if t.Status != model.StatusWaiting {
		return nil, nil
	}
	members := s.membersOnce(ctx, t.ProjectID)
	a, err := askedOf(t, members)
	if err != nil {
		return nil, err
	}
	return a.people(members)
}

// people is the emails of the people asked; members lists the project's members.
func (a asked) people(members func() ([]model.Member, error)) ([]string, error) {
	switch {
	case a.email != "":
		return []string{a.email}, nil
	case a.creator != nil:
		return []string{strings.ToLower(*a.creator.Email)}, nil
	}
	all, err := members()
	if err != nil {
		return nil, internal("list members", err)
	}
	emails := []string{}
	for _, m := range all {
		if m.Email != nil && slices.Contains(RoleScopes(m.Role), auth.TaskWrite) {
			emails = append(emails, strings.ToLower(*m.Email))
		}
	}
	return emails, nil
}

// asksMe says whether a's question asks p: p is the person named, or the creator, or
// may write tasks when it asks everyone who may. Nobody who cannot write tasks is asked.
func (a asked) asksMe(p *auth.Principal, myEmail string) bool {
	switch {
	case !p.Has(auth.TaskWrite):
		return false
	case a.email != "":
		return myEmail != "" && strings.EqualFold(a.email, myEmail)
	case a.creator != nil:
		return personOf(p) == a.creator.UserID
	}
	return true
}

// WaitingFor is whom a Waiting task waits for, as the board and the Inbox show it.
type WaitingFor struct {
	ID      int64    `json:"id"`
	Asked   []string `json:"asked"`    // the emails of the people asked (PeopleAsked)
	Anyone  bool     `json:"anyone"`   // it asks every member who may write tasks
	AsksYou bool     `json:"asks_you"` // the caller is asked
}

// maxWaitingFor bounds the tasks WaitingForList looks at.
const maxWaitingFor = 1000

// WaitingForList says, for each Waiting task of the caller's project (the oldest 1,000),
// whom it waits for and whether that is the caller.
func (s *Service) WaitingForList(ctx context.Context, p *auth.Principal) ([]WaitingFor, error) {
	tasks, _, err := s.ListTasks(ctx, p, ListTasksInput{Status: model.StatusWaiting, PageInput: PageInput{Limit: maxWaitingFor}})
	if err != nil {
		return nil, err
	}
	r := s.store.Read()
	myEmail := ""
	if id := personOf(p); id != 0 {
		if person, err := r.Person(ctx, id); err == nil {
			myEmail = person.Email
		}
	}
	readMembers := s.membersOnce(ctx, p.ProjectID)
	out := make([]WaitingFor, 0, len(tasks))
	for i := range tasks {
		a, err := askedOf(&tasks[i], readMembers)
		if err != nil {
			return nil, err
		}
		people, err := a.people(readMembers)
		if err != nil {
			return nil, err
		}
		out = append(out, WaitingFor{ID: tasks[i].ID, Asked: people, Anyone: a.anyWriter, AsksYou: a.asksMe(p, myEmail)})
	}
	return out, nil
}

// membersOnce reads the project's members on the first call and gives the same list
// to the later ones.
func (s *Service) membersOnce(ctx context.Context, projectID string) func() ([]model.Member, error) {
	var members []model.Member
	var err error
	read := false
	return func() ([]model.Member, error) {
		if !read {
			members, err = s.store.Read().Members(ctx, projectID)
			read = true
		}
		return members, err
	}
}

// personOf is the user p acts as: a signed-in user, or the maker of a token; 0 for
// anyone else (an agent, the local owner, a token nobody made).
func personOf(p *auth.Principal) int64 {
	switch {
	case p == nil:
		return 0
	case p.Kind == auth.KindUser:
		return p.UserID
	case p.Kind == auth.KindToken:
		return p.TokenMaker
	}
	return 0
}
