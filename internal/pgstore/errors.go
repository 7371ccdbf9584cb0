package pgstore

import "errors"

var (
	// ErrLockTimeout: a write waited LockTimeout for another writer of the
	// same memory and gave up; nothing was written.
	ErrLockTimeout = errors.New("timed out waiting for the memory's lock in PostgreSQL")
	// ErrSchemaTooNew: the database was migrated by a newer release.
	ErrSchemaTooNew = errors.New("the database schema is newer than this server")
	// ErrNotEmpty: Import without replace into a memory that holds something.
	ErrNotEmpty = errors.New("the memory in the database is not empty")
	// ErrCorrupt: stored lines do not decode to the rows they came from.
	ErrCorrupt = errors.New("the memory's rows in the database are inconsistent")
)
