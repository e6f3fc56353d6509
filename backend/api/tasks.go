package api

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// tasksHandler serves the Tasks REST interface.
type tasksHandler struct {
	svc   *service.Service
	cache *taskCache // the lists' encoded tasks (taskcache.go)
}

// idempotencyKey is the request's Idempotency-Key header ("" when absent).
func idempotencyKey(c *gin.Context) string { return c.GetHeader("Idempotency-Key") }

// listTasks serves GET /api/tasks and GET /api/projects/{projectId}/tasks.
func (h tasksHandler) list(c *gin.Context) error {
	in := service.ListTasksInput{Status: c.Query("status")}
	if _, present := c.GetQuery("status"); present && in.Status == "" {
		return errs.Invalid("status must not be empty; use one of Backlog, Todo, Doing, Waiting, Done, Failed")
	}
	if v, ok, err := queryInt(c, "agent_id"); err != nil {
		return err
	} else if ok {
		in.AgentID = &v
	}
	page, err := pageInput(c)
	if err != nil {
		return err
	}
	if in.Query, err = searchQuery(c); err != nil {
		return err
	}
	switch order := c.Query("order"); order {
	case "", "asc":
	case "desc":
		in.Desc = true
	default:
		return errs.Invalid("order takes asc (oldest first, the default) or desc (newest first), not %q", order)
	}
	if assigned, present := c.GetQuery("assigned"); present { // present but empty is refused, as status
		if assigned != "me" {
			return errs.Invalid("assigned takes only the value me")
		}
		in.AssignedMe = true
	}
	if page.Limit == 0 || page.Limit > maxCachedPage {
		// The whole list (streamed a page at a time) or a bulk page: read and encoded as
		// it goes, and not kept. A script paging through every task reads each once, and
		// keeping them would hold memory for tasks no board lists again (make bench's
		// listing of 10,000 ids in pages of 500 filled the cache: 10.8 MB of heap).
		read := func(pg service.PageInput) ([]model.Task, bool, error) {
			in.PageInput = pg
			return h.svc.ListTasks(c.Request.Context(), principal(c), in)
		}
		return answerList(c, page, read, func(t model.Task) int64 { return t.ID }, appendTask)
	}
	read := func(pg service.PageInput) ([]encodedTask, bool, error) {
		in.PageInput = pg
		return h.cache.page(c.Request.Context(), h.svc, principal(c), in)
	}
	return answerList(c, page, read, lastTaskID, appendEncodedTask)
}

// searchQuery is the optional q of a task list: present, it must not be empty.
func searchQuery(c *gin.Context) (string, error) {
	q, present := c.GetQuery("q")
	if present && q == "" {
		return "", errs.Invalid("q must not be empty; leave it out to list every task")
	}
	return q, nil
}

// counts serves GET /api/tasks/counts and GET /api/projects/{projectId}/tasks/counts.
// waitingFor serves GET /api/waiting-for: whom each Waiting task waits for.
func (h tasksHandler) waitingFor(c *gin.Context) error {
	list, err := h.svc.WaitingForList(c.Request.Context(), principal(c))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"tasks": list})
	return nil
}

func (h tasksHandler) counts(c *gin.Context) error {
	q, err := searchQuery(c)
	if err != nil {
		return err
	}
	in := service.CountTasksInput{Query: q}
	if v, ok, err := queryInt(c, "agent_id"); err != nil {
		return err
	} else if ok {
		in.AgentID = &v
	}
	counts, err := h.svc.CountTasks(c.Request.Context(), principal(c), in)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, counts)
	return nil
}

// get serves GET /api/tasks/{id} and GET /api/projects/{projectId}/tasks/{id}.
func (h tasksHandler) get(c *gin.Context) error {
	id, err := taskID(c)
	if err != nil {
		return err
	}
	task, err := h.svc.GetTask(c.Request.Context(), principal(c), id)
	if err != nil {
		return err
	}
	if notModified(c, task.ETag) { // etag.go
		return nil
	}
	return writeTask(c, http.StatusOK, task)
}

// create serves POST /api/tasks.
func (h tasksHandler) create(c *gin.Context) error {
	in, err := decodeCreateTask(c)
	if err != nil {
		return err
	}
	task, err := h.svc.CreateTask(c.Request.Context(), principal(c), in, idempotencyKey(c))
	if err != nil {
		return err
	}
	c.Header("Location", fmt.Sprintf("/api/tasks/%d", task.ID))
	return writeTask(c, http.StatusCreated, task)
}

func decodeCreateTask(c *gin.Context) (service.CreateTaskInput, error) {
	body, err := readBody(c, MaxJSONBody)
	if err != nil {
		return service.CreateTaskInput{}, err
	}
	return DecodeCreateTask(body)
}

// DecodeCreateTask decodes a create-task body.
func DecodeCreateTask(body []byte) (service.CreateTaskInput, error) {
	var in service.CreateTaskInput
	err := decodeJSON(body, &in, false)
	return in, err
}

// StatusBody is the body of PUT /api/tasks/{id}/status (and of the step status).
type StatusBody struct {
	Status         *string `json:"status"`
	WaitingDetails *string `json:"waiting_details"`
	service.Question
}

// DecodeStatus decodes a status body; status is required.
func DecodeStatus(body []byte) (StatusBody, error) {
	var in StatusBody
	if err := decodeJSON(body, &in, false); err != nil {
		return in, err
	}
	if in.Status == nil {
		return in, errs.Invalid("status is required")
	}
	return in, nil
}

// taskID is the {id} of the path.
func taskID(c *gin.Context) (int64, error) { return pathID(c, "id", "task id") }

// readStatus reads the status body of a PUT (the task's or a step's).
func readStatus(c *gin.Context) (StatusBody, error) {
	body, err := readBody(c, MaxJSONBody)
	if err != nil {
		return StatusBody{}, err
	}
	return DecodeStatus(body)
}

// setStatus serves PUT /api/tasks/{id}/status.
func (h tasksHandler) setStatus(c *gin.Context) error {
	id, err := taskID(c)
	if err != nil {
		return err
	}
	in, err := readStatus(c)
	if err != nil {
		return err
	}
	task, err := h.svc.SetTaskStatus(c.Request.Context(), principal(c), id, *in.Status, in.WaitingDetails, &in.Question, ifMatch(c))
	return writeTaskOr(c, task, err)
}

// setAgent serves PUT /api/tasks/{id}/agent.
func (h tasksHandler) setAgent(c *gin.Context) error {
	id, err := taskID(c)
	if err != nil {
		return err
	}
	var in struct {
		AgentID *int64 `json:"agent_id"`
	}
	if err := bindJSON(c, &in, true); err != nil {
		return err
	}
	task, err := h.svc.AssignTask(c.Request.Context(), principal(c), id, in.AgentID, ifMatch(c))
	return writeTaskOr(c, task, err)
}

// edit serves PATCH /api/tasks/{id}: a new summary, details or step titles.
func (h tasksHandler) edit(c *gin.Context) error {
	id, err := taskID(c)
	if err != nil {
		return err
	}
	var in service.EditTaskInput
	if err := bindJSON(c, &in, false); err != nil {
		return err
	}
	task, err := h.svc.EditTask(c.Request.Context(), principal(c), id, in, ifMatch(c))
	return writeTaskOr(c, task, err)
}

// setStepStatus serves PUT /api/tasks/{id}/steps/{stepNum}/status.
func (h tasksHandler) setStepStatus(c *gin.Context) error {
	id, err := taskID(c)
	if err != nil {
		return err
	}
	raw := c.Param("stepNum")
	stepNum, perr := strconv.Atoi(raw)
	if perr != nil || stepNum < 0 {
		return errs.Invalid("step number must be an integer from 0 (steps are numbered from 0), not %q", raw)
	}
	in, err := readStatus(c)
	if err != nil {
		return err
	}
	task, err := h.svc.SetStepStatus(c.Request.Context(), principal(c), id, stepNum, *in.Status, ifMatch(c))
	return writeTaskOr(c, task, err)
}

// respond serves POST /api/tasks/{id}/respond.
func (h tasksHandler) respond(c *gin.Context) error {
	id, err := taskID(c)
	if err != nil {
		return err
	}
	var in service.RespondInput
	if err := bindJSON(c, &in, false); err != nil {
		return err
	}
	task, err := h.svc.Respond(c.Request.Context(), principal(c), id, in, idempotencyKey(c), ifMatch(c))
	return writeTaskOr(c, task, err)
}

// comment serves POST /api/tasks/{id}/comments: a comment in the task's conversation,
// whatever its status.
func (h tasksHandler) comment(c *gin.Context) error {
	id, err := taskID(c)
	if err != nil {
		return err
	}
	var in service.CommentInput
	if err := bindJSON(c, &in, false); err != nil {
		return err
	}
	task, err := h.svc.CommentTask(c.Request.Context(), principal(c), id, in, idempotencyKey(c), ifMatch(c))
	return writeTaskOr(c, task, err)
}

// delete serves DELETE /api/tasks/{id}.
func (h tasksHandler) delete(c *gin.Context) error {
	id, err := taskID(c)
	if err != nil {
		return err
	}
	if err := h.svc.DeleteTask(c.Request.Context(), principal(c), id, ifMatch(c)); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}

// deleteDone serves DELETE /api/tasks/done.
func (h tasksHandler) deleteDone(c *gin.Context) error {
	n, err := h.svc.DeleteDoneTasks(c.Request.Context(), principal(c))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"deleted": n})
	return nil
}

// writeTaskOr answers a change of one task: 200 with the task, or the error.
func writeTaskOr(c *gin.Context, task *model.Task, err error) error {
	if err != nil {
		return err
	}
	return writeTask(c, http.StatusOK, task)
}

// writeTask writes the task with status. The answer carries the task's ETag, unless it
// is unknown (a replayed idempotent answer: the task may have changed).
func writeTask(c *gin.Context, status int, v *model.Task) error {
	body, err := v.AppendJSON(make([]byte, 0, 1024)) // as c.JSON would, without reflection
	if err != nil {
		return err
	}
	if v.ETag != "" {
		c.Header("ETag", v.ETag)
	}
	c.Data(status, "application/json; charset=utf-8", body)
	return nil
}
