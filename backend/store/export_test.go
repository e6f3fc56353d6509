package store

import "github.com/agentdesk/agentdesk/backend/model"

// FailNextSync makes the store's next fsync of a write with an event of eventType fail
// with err, as a failing disk would (a background write's fsync, say a prune's, is left
// alone, so that the test knows which write the failure was for); the fsyncs after it
// succeed again (which must not make the store carry on).
func FailNextSync(s *Store, err error, eventType string) {
	var once bool // the syncer alone calls the hook
	hook := func(events []model.Event) error {
		if once {
			return nil
		}
		for _, e := range events {
			if e.Type == eventType {
				once = true
				return err
			}
		}
		return nil
	}
	s.beforeSync.Store(&hook)
}
