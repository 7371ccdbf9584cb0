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

// databaseError is a failure that the database or the connection to it
// reported. Its text may name the database's user, host and port, which
// the server's log keeps; a client over HTTP reads only what Redacted says
// (internal/redact).
type databaseError struct{ err error }

func (e databaseError) Error() string { return e.err.Error() }
func (e databaseError) Unwrap() error { return e.err }

// Redacted says that the database failed, not where it is.
func (databaseError) Redacted() string {
	return "the database failed (the server's log has the details)"
}
