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
type tasksHandler struct{ svc *service.Service }

// idempotencyKey is the request's Idempotency-Key header ("" when absent).
func idempotencyKey(c *gin.Context) string { return c.GetHeader("Idempotency-Key") }

// listTasks serves GET /api/tasks and GET /api/projects/{projectId}/tasks.
func (h tasksHandler) list(c *gin.Context) {
	if c.Param("projectId") != "" {
		if err := pathProject(c); err != nil {
			fail(c, err)
			return
		}
	}
	in := service.ListTasksInput{Status: c.Query("status")}
	if _, present := c.GetQuery("status"); present && in.Status == "" {
		fail(c, errs.Invalid("status must not be empty; use one of Backlog, Todo, Doing, Waiting, Done, Failed"))
		return
	}
	if v, ok, err := queryInt(c, "agent_id"); err != nil {
		fail(c, err)
		return
	} else if ok {
		in.AgentID = &v
	}
	page, err := pageInput(c)
	if err != nil {
		fail(c, err)
		return
	}
	in.PageInput = page
	if assigned, present := c.GetQuery("assigned"); present { // present but empty is refused, as status
		if assigned != "me" {
			fail(c, errs.Invalid("assigned takes only the value me"))
			return
		}
		in.AssignedMe = true
	}
	tasks, more, err := h.svc.ListTasksJSON(c.Request.Context(), principal(c), in)
	writeTaskList(c, tasks, more, err)
}

// get serves GET /api/tasks/{id} and GET /api/projects/{projectId}/tasks/{id}.
func (h tasksHandler) get(c *gin.Context) {
	if c.Param("projectId") != "" {
		if err := pathProject(c); err != nil {
			fail(c, err)
			return
		}
	}
	id, err := pathID(c, "id", "task id")
	if err != nil {
		fail(c, err)
		return
	}
	task, err := h.svc.GetTask(c.Request.Context(), principal(c), id)
	if err == nil && notModified(c, task.ETag) { // etag.go
		return
	}
	writeTask(c, http.StatusOK, task, err)
}

// create serves POST /api/tasks.
func (h tasksHandler) create(c *gin.Context) {
	in, err := decodeCreateTask(c)
	if err != nil {
		fail(c, err)
		return
	}
	task, err := h.svc.CreateTask(c.Request.Context(), principal(c), in, idempotencyKey(c))
	if err == nil {
		c.Header("Location", fmt.Sprintf("/api/tasks/%d", task.ID))
	}
	writeTask(c, http.StatusCreated, task, err)
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
	Status *string `json:"status"`
	service.WaitingDetailsInput
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
	waiting, err := in.Resolve()
	in.WaitingDetailsInput = service.WaitingDetailsInput{WaitingDetails: waiting}
	return in, err
}

// setStatus serves PUT /api/tasks/{id}/status.
func (h tasksHandler) setStatus(c *gin.Context) {
	id, err := pathID(c, "id", "task id")
	if err != nil {
		fail(c, err)
		return
	}
	body, err := readBody(c, MaxJSONBody)
	if err != nil {
		fail(c, err)
		return
	}
	in, err := DecodeStatus(body)
	if err != nil {
		fail(c, err)
		return
	}
	task, err := h.svc.SetTaskStatus(ifMatch(c), principal(c), id, *in.Status, in.WaitingDetails)
	writeTask(c, http.StatusOK, task, err)
}

// setAgent serves PUT /api/tasks/{id}/agent.
func (h tasksHandler) setAgent(c *gin.Context) {
	id, err := pathID(c, "id", "task id")
	if err != nil {
		fail(c, err)
		return
	}
	var in struct {
		AgentID *int64 `json:"agent_id"`
	}
	if err := bindJSON(c, &in, true); err != nil {
		fail(c, err)
		return
	}
	task, err := h.svc.AssignTask(ifMatch(c), principal(c), id, in.AgentID)
	writeTask(c, http.StatusOK, task, err)
}

// setStepStatus serves PUT /api/tasks/{id}/steps/{stepNum}/status.
func (h tasksHandler) setStepStatus(c *gin.Context) {
	id, err := pathID(c, "id", "task id")
	if err != nil {
		fail(c, err)
		return
	}
	raw := c.Param("stepNum")
	stepNum, perr := strconv.Atoi(raw)
	if perr != nil || stepNum < 0 {
		fail(c, errs.Invalid("step number must be an integer from 0 (steps are numbered from 0), not %q", raw))
		return
	}
	body, err := readBody(c, MaxJSONBody)
	if err != nil {
		fail(c, err)
		return
	}
	in, err := DecodeStatus(body)
	if err != nil {
		fail(c, err)
		return
	}
	task, err := h.svc.SetStepStatus(ifMatch(c), principal(c), id, stepNum, *in.Status)
	writeTask(c, http.StatusOK, task, err)
}

// respond serves POST /api/tasks/{id}/respond.
func (h tasksHandler) respond(c *gin.Context) {
	id, err := pathID(c, "id", "task id")
	if err != nil {
		fail(c, err)
		return
	}
	var in service.RespondInput
	if err := bindJSON(c, &in, false); err != nil {
		fail(c, err)
		return
	}
	task, err := h.svc.Respond(ifMatch(c), principal(c), id, in, idempotencyKey(c))
	writeTask(c, http.StatusOK, task, err)
}

// delete serves DELETE /api/tasks/{id}.
func (h tasksHandler) delete(c *gin.Context) {
	id, err := pathID(c, "id", "task id")
	if err != nil {
		fail(c, err)
		return
	}
	if err := h.svc.DeleteTask(ifMatch(c), principal(c), id); err != nil {
		fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// deleteDone serves DELETE /api/tasks/done.
func (h tasksHandler) deleteDone(c *gin.Context) {
	n, err := h.svc.DeleteDoneTasks(c.Request.Context(), principal(c))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"deleted": n})
}

// writeTask writes the task with status, or the error. The answer carries the task's
// ETag, unless it is unknown (a replayed idempotent answer: the task may have changed).
func writeTask(c *gin.Context, status int, v *model.Task, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	if v.ETag != "" {
		c.Header("ETag", v.ETag)
	}
	body, err := v.AppendJSON(make([]byte, 0, 1024)) // as c.JSON would, without reflection
	if err != nil {
		fail(c, err)
		return
	}
	c.Data(status, "application/json; charset=utf-8", body)
}
