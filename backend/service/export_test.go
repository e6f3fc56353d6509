package service

import (
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// SetDeleteDoneBatch sets how many tasks one write of DeleteDoneTasks removes, for a
// test, and returns the undo.
func SetDeleteDoneBatch(n int) (undo func()) {
	old := deleteDoneBatch
	deleteDoneBatch = n
	return func() { deleteDoneBatch = old }
}

// SetMailQuestionFields stands in for the question's options and deadline (the seam
// of mailquestion.go) in a test, and returns the undo.
func SetMailQuestionFields(options func(*model.Task) []string, expiry func(*model.Task) *time.Time) (undo func()) {
	oldOptions, oldExpiry := mailOptions, mailExpiry
	mailOptions, mailExpiry = options, expiry
	return func() { mailOptions, mailExpiry = oldOptions, oldExpiry }
}
