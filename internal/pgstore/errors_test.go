package pgstore

import (
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// Only errors that say the connection failed tell the caller to try again.
func TestConnectionFailed(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "57P01"}, true}, // admin_shutdown
		{&pgconn.PgError{Code: "57P03"}, true}, // cannot_connect_now
		{fmt.Errorf("reading: %w", &pgconn.PgError{Code: "08006"}), true},
		{&net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, true},
		{fmt.Errorf("wrapped: %w", io.ErrUnexpectedEOF), true},
		{&pgconn.PgError{Code: "23505"}, false}, // unique_violation
		{&pgconn.PgError{Code: "57014"}, false}, // query_canceled
		{errors.New("the memory no longer exists in the database"), false},
	} {
		if got := connectionFailed(tt.err); got != tt.want {
			t.Errorf("connectionFailed(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
