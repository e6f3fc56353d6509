package store

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/agentdesk/agentdesk/backend/model"
)

// InsertTask stores a new task with its steps, setting the ids.
func (t *Tx) InsertTask(ctx context.Context, task *model.Task) error {
	steps, err := encodeSteps(task.Steps)
	if err != nil {
		return err
	}
	res, err := t.insert(ctx,
		`INSERT INTO tasks (project_id, agent_id, conversation_id, summary, details, status, source, task_type, waiting_details, waiting_version, created_at, updated_at, steps, version,
		 created_by, waiting_options, waiting_schema, waiting_expires_at, waiting_on_expiry, waiting_default, waiting_ask)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 1, $14, $15, $16, $17, $18, $19, $20)`,
		append([]any{task.ProjectID, task.AgentID, task.ConversationID, task.Summary, task.Details, task.Status, task.Source, task.TaskType,
			task.WaitingDetails, task.WaitingVersion, fmtTime(task.CreatedAt), fmtTime(task.UpdatedAt), steps, task.CreatedBy}, questionArgs(task)...)...)
	if err != nil {
		return err
	}
	if task.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	task.Version = 1
	for i := range task.Steps {
		task.Steps[i].ID = model.StepID(task.ID, i)
	}
	return nil
}

// storedStep is a step as the tasks.steps column holds it: a JSON array of them, in
// position order (migration 00010). A step's id is not stored; it follows from the task's
// id and the position (model.StepID).
type storedStep struct {
	Title  string `json:"title"`
	Status string `json:"status"`
}

func encodeSteps(steps []model.Step) (string, error) {
	stored := make([]storedStep, len(steps))
	for i, s := range steps {
		stored[i] = storedStep{Title: s.Title, Status: s.Status}
	}
	b, err := json.Marshal(stored)
	return string(b), err
}

func decodeSteps(taskID int64, raw string) ([]model.Step, error) {
	if raw == "[]" {
		return nil, nil
	}
	if steps, ok := decodePlainSteps(taskID, raw); ok {
		return steps, nil
	}
	var stored []storedStep
	if err := json.Unmarshal([]byte(raw), &stored); err != nil {
		return nil, fmt.Errorf("the steps of task %d: %w", taskID, err)
	}
	steps := make([]model.Step, len(stored))
	for i, s := range stored {
		steps[i] = model.Step{ID: model.StepID(taskID, i), Title: s.Title, Status: s.Status}
	}
	return steps, nil
}

// decodePlainSteps reads steps as encodeSteps writes them when no title needs an
// escape, [{"title":"...","status":"..."},...], without encoding/json: a page of tasks
// spent a quarter of its read decoding steps. Anything else (an escape, another
// spelling) is not ok, and json.Unmarshal reads it.
func decodePlainSteps(taskID int64, raw string) ([]model.Step, bool) {
	steps := make([]model.Step, 0, strings.Count(raw, `{"title":"`))
	rest, ok := strings.CutPrefix(raw, "[")
	for ok {
		var title, status string
		if rest, ok = strings.CutPrefix(rest, `{"title":"`); !ok {
			break
		}
		if title, rest, ok = strings.Cut(rest, `","status":"`); !ok || strings.ContainsAny(title, `"\`) {
			return nil, false
		}
		if status, rest, ok = strings.Cut(rest, `"}`); !ok || strings.ContainsAny(status, `"\`) {
			return nil, false
		}
		steps = append(steps, model.Step{ID: model.StepID(taskID, len(steps)), Title: title, Status: status})
		if rest == "]" {
			return steps, true
		}
		rest, ok = strings.CutPrefix(rest, ",")
	}
	return nil, false
}

// UpdateTask writes a task's own fields (not its steps or conversation) and bumps its
// version, setting task.Version. Every change of a task ends with it (service.saveTask),
// so a write that also changes the steps or the conversation bumps the version once.
func (t *Tx) UpdateTask(ctx context.Context, task *model.Task) error {
	err := t.queryRow(ctx,
		`UPDATE tasks SET agent_id = $1, summary = $2, details = $3, status = $4, task_type = $5, waiting_details = $6, waiting_version = $7, updated_at = $8,
		 waiting_options = $11, waiting_schema = $12, waiting_expires_at = $13, waiting_on_expiry = $14, waiting_default = $15, waiting_ask = $16,
		 version = version + 1 WHERE id = $9 AND project_id = $10 RETURNING version`,
		append([]any{task.AgentID, task.Summary, task.Details, task.Status, task.TaskType, task.WaitingDetails, task.WaitingVersion,
			fmtTime(task.UpdatedAt), task.ID, task.ProjectID}, questionArgs(task)...)...).Scan(&task.Version)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// TaskVersion reads the version of a task of the project.
func (t *Tx) TaskVersion(ctx context.Context, projectID string, id int64) (int64, error) {
	var v int64
	err := t.queryRow(ctx, `SELECT version FROM tasks WHERE id = $1 AND project_id = $2`, id, projectID).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	return v, err
}

// UpdateStepStatus sets the status of the step at position (0-based) of a task.
func (t *Tx) UpdateStepStatus(ctx context.Context, taskID int64, position int, status string) error {
	return t.execOne(ctx, t.sql.updateStepStatus, status, position, taskID)
}

// AppendTaskMessage adds an entry to a task's conversation.
func (t *Tx) AppendTaskMessage(ctx context.Context, taskID int64, m model.TaskMessage) error {
	const insert = `INSERT INTO task_messages (task_id, role, content, created_at, author, question, data) VALUES ($1, $2, $3, $4, $5, NULLIF($6, ''), $7)`
	_, err := t.exec(ctx, insert, taskID, m.Role, m.Content, fmtTime(m.CreatedAt), m.Author, m.Question, rawJSON(m.Data))
	return err
}

// DeleteTask removes a task of the project with its steps and conversation.
func (t *Tx) DeleteTask(ctx context.Context, projectID string, id int64) error {
	return t.execOne(ctx, `DELETE FROM tasks WHERE id = $1 AND project_id = $2`, id, projectID)
}

// DeleteTasksWithStatus removes the project's tasks in a status, the oldest limit of them
// (0: all), and returns their ids.
func (t *Tx) DeleteTasksWithStatus(ctx context.Context, projectID, status string, limit int) ([]int64, error) {
	q := `DELETE FROM tasks WHERE project_id = $1 AND status = $2 RETURNING id`
	if limit > 0 {
		q = `DELETE FROM tasks WHERE id IN (SELECT id FROM tasks WHERE project_id = $1 AND status = $2 ORDER BY id LIMIT $3) RETURNING id`
	}
	ids, err := t.ids(ctx, q, projectID, status, limit)
	return ids, err
}

// TaskFilter selects a project's tasks. Limit 0 means no limit.
type TaskFilter struct {
	ProjectID string
	Status    string // "" for any
	AgentID   *int64
	// ConversationID selects the tasks linked to a conversation.
	ConversationID *int64
	AfterID        int64
	Limit          int
	// Query keeps the tasks whose summary or details hold every word of it (by prefix,
	// accents and case ignored), through the index of the project's words (TaskSearchTerms).
	Query string
	// Desc lists newest first: AfterID then means the page after it in that order
	// (smaller ids), 0 the newest.
	Desc bool
}

// page completes selectFrom (over tasks t) into the query of f's page, oldest first, with
// one task more than the limit: its presence says more remain.
func (f TaskFilter) page(selectFrom string, d *dialect) (string, []any) {
	where, args := f.where(d)
	where, asc, desc := d.taskPageOrder(f, where)
	var q string
	switch {
	case !f.Desc:
		args = append(args, f.AfterID)
		q = selectFrom + ` WHERE ` + where + ` AND t.id > $` + strconv.Itoa(len(args)) + ` ORDER BY ` + asc
	case f.AfterID > 0:
		args = append(args, f.AfterID)
		q = selectFrom + ` WHERE ` + where + ` AND t.id < $` + strconv.Itoa(len(args)) + ` ORDER BY ` + desc
	default:
		q = selectFrom + ` WHERE ` + where + ` ORDER BY ` + desc
	}
	if f.Limit > 0 {
		q += limitClause(f.Limit + 1)
	}
	return q, args
}

// TaskCounts counts the project's tasks in each status. Without a search or an agent it
// reads the counts the triggers of migration 00021 keep (task_counts: a few rows,
// whatever the project's size); with one, it counts the matching tasks in one query.
// Statuses without tasks are absent. f's status, paging and order are not used.
func (r Reader) TaskCounts(ctx context.Context, f TaskFilter) (map[string]int64, error) {
	if f.Query == "" && f.AgentID == nil && f.ConversationID == nil {
		return r.countRows(ctx, `SELECT status, n FROM task_counts WHERE project_id = $1 AND n > 0`, f.ProjectID)
	}
	f.Status = ""
	where, args := f.where(r.sql)
	return r.countRows(ctx, taskCountsQuery(f, where, r.sql), args...)
}

// taskCountsQuery counts the filtered tasks per status; where begins with the project's
// condition.
func taskCountsQuery(f TaskFilter, where string, d *dialect) string {
	return `SELECT t.status, COUNT(*) FROM tasks t WHERE ` + d.taskCountsWhere(f, where) + ` GROUP BY t.status`
}

// countRows reads (status, count) rows.
func (r Reader) countRows(ctx context.Context, q string, args ...any) (map[string]int64, error) {
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var status string
		var n int64
		if err := rows.Scan(&status, &n); err != nil {
			return nil, err
		}
		out[status] = n
	}
	return out, rows.Err()
}

func (f TaskFilter) where(d *dialect) (string, []any) {
	var sb strings.Builder
	var args []any
	param := func(v any) string { // the next parameter, $N
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	sb.WriteString("t.project_id = " + param(f.ProjectID))
	if f.Status != "" {
		sb.WriteString(" AND t.status = " + param(f.Status))
	}
	if f.AgentID != nil {
		sb.WriteString(" AND t.agent_id = " + param(*f.AgentID))
	}
	if f.ConversationID != nil {
		sb.WriteString(" AND t.conversation_id = " + param(*f.ConversationID))
	}
	if f.Query != "" {
		// The matches come from the index; the page is still read in id order over the
		// project's index, so that search pages like any list (after_id, Link).
		sb.WriteString(" AND " + d.taskSearch(param, f.ProjectID, f.Query))
	}
	return sb.String(), args
}

// IndexTaskSearch brings the task search index up to date with the tasks changed
// since, about limit of them at most, and says whether some remain (on SQLite; on
// PostgreSQL every write keeps its index).
func (t *Tx) IndexTaskSearch(ctx context.Context, limit int) (more bool, err error) {
	return t.sql.indexTaskSearch(ctx, t, limit)
}

// searchTag is the mark of a project's words in the search indexes (migration 00030):
// 12 letters from the MD5 of its id, the hex digits 0-9 written g-p, so that tag and
// word are one word to both tokenizers. A prefix search then reads only the terms of
// its own project. Two projects sharing a tag would only share cost: every search
// also keeps to its project's tasks. PostgreSQL computes the same (task_search_tag).
func searchTag(projectID string) string {
	sum := md5.Sum([]byte(projectID))
	tag := []byte(hex.EncodeToString(sum[:6]))
	for i, c := range tag {
		if c >= '0' && c <= '9' {
			tag[i] = 'g' + (c - '0')
		}
	}
	return string(tag)
}

// searchWords splits text into its words, lower case: runs of letters and digits.
func searchWords(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) })
}

// TaskSearchBehind says whether tasks wait to be indexed for search.
func (r Reader) TaskSearchBehind(ctx context.Context) (bool, error) {
	return r.sql.taskSearchBehind(ctx, r)
}

// maxSearchTerms bounds the words of a task search.
const maxSearchTerms = 16

// TaskSearchTerms splits a search into its words (letters and digits), lower case,
// without repeats, at most maxSearchTerms: what a task search matches. None means the
// search cannot match anything.
func TaskSearchTerms(q string) []string {
	var terms []string
	for _, w := range searchWords(q) {
		if !slices.Contains(terms, w) && len(terms) < maxSearchTerms {
			terms = append(terms, w)
		}
	}
	return terms
}

// taskTSQuery is taskMatch for PostgreSQL's to_tsquery: every word of the project, by prefix.
func taskTSQuery(projectID, q string) string {
	tag := searchTag(projectID)
	terms := TaskSearchTerms(q)
	for i, w := range terms {
		terms[i] = tag + w + ":*" // letters and digits only: nothing to quote
	}
	return strings.Join(terms, " & ")
}

// taskMatch is the FTS5 query of a search of a project: every word, each as a quoted
// prefix behind the project's tag (nothing the user types is FTS5 syntax).
func taskMatch(projectID, q string) string {
	tag := searchTag(projectID)
	terms := TaskSearchTerms(q)
	for i, w := range terms {
		terms[i] = `"` + tag + w + `"*` // words hold letters and digits only: no quote to escape
	}
	return strings.Join(terms, " AND ")
}

func scanTask(row interface{ Scan(...any) error }) (*model.Task, error) {
	var task model.Task
	var agentID, conversationID sql.NullInt64
	var waiting sql.NullString
	var created, updated, steps, skills string
	var q storedQuestion
	err := row.Scan(&task.ID, &task.ProjectID, &agentID, &task.AgentName, &conversationID, &task.Summary, &task.Details, &task.Status,
		&task.Source, &task.TaskType, &waiting, &task.WaitingVersion, &created, &updated, &steps, &task.Version, &skills,
		&q.createdBy, &q.options, &q.schema, &q.expiresAt, &q.onExpiry, &q.def, &q.ask)
	if err != nil {
		return nil, err
	}
	if err := q.set(&task); err != nil {
		return nil, err
	}
	if task.Steps, err = decodeSteps(task.ID, steps); err != nil {
		return nil, err
	}
	if task.RequiredSkills, err = parseSkillNames(skills); err != nil { // skills.go
		return nil, err
	}
	if agentID.Valid {
		task.AgentID = &agentID.Int64
	}
	if conversationID.Valid {
		task.ConversationID = &conversationID.Int64
	}
	if waiting.Valid {
		task.WaitingDetails = &waiting.String
	}
	task.CreatedAt, task.UpdatedAt = parseTime(created), parseTime(updated)
	return &task, nil
}

// Task loads one task of the project with its steps and, if asked, its conversation.
func (r Reader) Task(ctx context.Context, projectID string, id int64, withConversation bool) (*model.Task, error) {
	task, err := scanTask(r.queryRow(ctx, r.sql.taskByID, id, projectID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if withConversation {
		if task.Conversation, err = r.taskConversation(ctx, id); err != nil {
			return nil, err
		}
	}
	task.Derive()
	return task, nil
}

const (
	taskConversationQuery = `SELECT role, content, created_at, COALESCE(author, ''), COALESCE(question, ''), data FROM task_messages WHERE task_id = $1 ORDER BY id`
)

func (r Reader) taskConversation(ctx context.Context, taskID int64) ([]model.TaskMessage, error) {
	rows, err := r.query(ctx, taskConversationQuery, taskID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []model.TaskMessage{}
	for rows.Next() {
		m, err := scanTaskMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// scanTaskMessage scans a row of taskConversationQuery.
func scanTaskMessage(row interface{ Scan(...any) error }) (model.TaskMessage, error) {
	var m model.TaskMessage
	var created string
	var data sql.NullString
	if err := row.Scan(&m.Role, &m.Content, &created, &m.Author, &m.Question, &data); err != nil {
		return m, err
	}
	if data.Valid {
		m.Data = json.RawMessage(data.String)
	}
	m.CreatedAt = parseTime(created)
	return m, nil
}

// Tasks lists the tasks that match f, oldest first, with their steps, in one query.
// more reports whether tasks remain after the last one returned.
func (r Reader) Tasks(ctx context.Context, f TaskFilter) (tasks []model.Task, more bool, err error) {
	q, args := f.page(`SELECT `+r.sql.taskColumns+` FROM tasks t LEFT JOIN agents a ON a.id = t.agent_id`, r.sql)
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, false, err
	}
	tasks = make([]model.Task, 0, max(f.Limit, 16))
	for rows.Next() {
		task, err := scanTask(rows)
		if err != nil {
			rows.Close()
			return nil, false, err
		}
		tasks = append(tasks, *task)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if f.Limit > 0 && len(tasks) > f.Limit {
		tasks, more = tasks[:f.Limit], true
	}
	for i := range tasks {
		tasks[i].Derive()
	}
	return tasks, more, nil
}

// UpdateSteps replaces a task's steps (titles and statuses, in position order).
func (t *Tx) UpdateSteps(ctx context.Context, taskID int64, steps []model.Step) error {
	raw, err := encodeSteps(steps)
	if err != nil {
		return err
	}
	return t.execOne(ctx, `UPDATE tasks SET steps = $1 WHERE id = $2`, raw, taskID)
}

// TaskVersion is a task's id and version: every change of what the task's JSON shows
// raises its version (UpdateTask, an agent's profile or deletion, a skill's rename), so
// an encoding of the task at that version is the task as it is (api's task cache).
type TaskVersion struct{ ID, Version int64 }

// TaskVersions is Tasks reading only each task's id and version.
func (r Reader) TaskVersions(ctx context.Context, f TaskFilter) (tasks []TaskVersion, more bool, err error) {
	q, args := f.page(`SELECT t.id, t.version FROM tasks t LEFT JOIN agents a ON a.id = t.agent_id`, r.sql)
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	tasks = make([]TaskVersion, 0, max(f.Limit, 16))
	for rows.Next() {
		var v TaskVersion
		if err := rows.Scan(&v.ID, &v.Version); err != nil {
			return nil, false, err
		}
		tasks = append(tasks, v)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if f.Limit > 0 && len(tasks) > f.Limit {
		tasks, more = tasks[:f.Limit], true
	}
	return tasks, more, nil
}

// TasksByID reads the project's tasks of ids, without their conversations, in no
// particular order; an id of another project, or of no task, is left out.
func (r Reader) TasksByID(ctx context.Context, projectID string, ids []int64) ([]model.Task, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	return queryList(ctx, r, func(row rowScanner) (*model.Task, error) {
		t, err := scanTask(row)
		if err == nil {
			t.Derive()
		}
		return t, err
	}, r.sql.tasksByID, projectID, string(list))
}
