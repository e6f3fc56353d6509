package store

// FailNextSync makes the store's next fsync fail with err, as a failing disk would; the
// fsyncs after it succeed again (which must not make the store carry on).
func FailNextSync(s *Store, err error) {
	var once bool // the syncer alone calls the hook
	hook := func() error {
		if once {
			return nil
		}
		once = true
		return err
	}
	s.beforeSync.Store(&hook)
}
