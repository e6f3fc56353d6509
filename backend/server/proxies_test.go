package server_test

import (
	"fmt"
	"testing"

	"github.com/agentdesk/agentdesk/backend/server"
)

func TestParseTrustedProxies(t *testing.T) {
	got, err := server.ParseTrustedProxies(" 127.0.0.1, 10.1.2.3/8 ,::1,, fd00::/8")
	if err != nil || fmt.Sprint(got) != "[127.0.0.1/32 10.0.0.0/8 ::1/128 fd00::/8]" {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := server.ParseTrustedProxies(""); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v %v", got, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "localhost", "1.2.3", "fe80::1%eth0"} {
		if _, err := server.ParseTrustedProxies(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
