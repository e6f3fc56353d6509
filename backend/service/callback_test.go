package service_test

import (
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/service"
)

// waiting_details wins over its synonym waitingDetails, which is still bounded.
func TestWaitingDetailsResolve(t *testing.T) {
	s := func(v string) *string { return &v }
	long := strings.Repeat("x", service.MaxResponseLen+1)
	for _, tc := range []struct {
		name string
		in   service.WaitingDetailsInput
		want *string
		code errs.Code
	}{
		{"neither", service.WaitingDetailsInput{}, nil, ""},
		{"snake", service.WaitingDetailsInput{WaitingDetails: s("a")}, s("a"), ""},
		{"camel", service.WaitingDetailsInput{WaitingDetailsCamel: s("b")}, s("b"), ""},
		{"both", service.WaitingDetailsInput{WaitingDetails: s("a"), WaitingDetailsCamel: s("b")}, s("a"), ""},
		// A long value alone is checked where it is used, as waiting_details.
		{"long camel alone", service.WaitingDetailsInput{WaitingDetailsCamel: &long}, &long, ""},
		{"long unused camel", service.WaitingDetailsInput{WaitingDetails: s("a"), WaitingDetailsCamel: &long}, nil, errs.InvalidArgument},
	} {
		got, err := tc.in.Resolve()
		if tc.code != "" {
			if errs.CodeOf(err) != tc.code {
				t.Errorf("%s: error %v, want %s", tc.name, err, tc.code)
			}
			continue
		}
		if err != nil || (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: got %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}
