package a2a_test

import (
	"testing"

	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
