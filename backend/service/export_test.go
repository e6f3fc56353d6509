package service

import ()

// SetDeleteDoneBatch sets how many tasks one write of DeleteDoneTasks removes, for a
// test, and returns the undo.
func SetDeleteDoneBatch(n int) (undo func()) {
	old := deleteDoneBatch
	deleteDoneBatch = n
	return func() { deleteDoneBatch = old }
}
