package pgstore

import "errors"

var (
	// ErrLockTimeout: a write waited LockTimeout for another writer of the
	// same memory and gave up; nothing was written. Its Timeout method
	// reports true, as the memory file's lock timeout does, so a caller
	// serving either store (the web page) needs to know neither.
	ErrLockTimeout error = lockTimeout("timed out waiting for the memory's lock in PostgreSQL")
	// ErrTimeout: the database did not answer within Options.QueryTimeout
	// (a read) or Options.WriteTimeout (a write). A write's error says
	// whether it may have been saved: "nothing was written" when its
	// COMMIT was never sent, "unknown" when the COMMIT got no answer.
	// Its Timeout method reports true.
	ErrTimeout error = lockTimeout("the database did not answer in time")
	// ErrSchemaTooNew: the database was migrated by a newer release.
	ErrSchemaTooNew = errors.New("the database schema is newer than this server")
	// ErrNotEmpty: Import without replace into a memory that holds something.
	ErrNotEmpty = errors.New("the memory in the database is not empty")
	// ErrCorrupt: stored lines do not decode to the rows they came from.
	ErrCorrupt = errors.New("the memory's rows in the database are inconsistent")
)

// lockTimeout is ErrLockTimeout's type: a busy lock, which trying again
// later may get.
type lockTimeout string

func (e lockTimeout) Error() string { return string(e) }
func (lockTimeout) Timeout() bool   { return true }
