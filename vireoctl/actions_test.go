package vireoctl

import (
	"encoding/json"
	"testing"
)

func TestActionOptions(t *testing.T) {
	for _, c := range []struct {
		action                string
		dryRun, paused, force bool
		grace                 int64
		want                  string
	}{
		{"start", false, false, false, -1, `{}`},
		{"start", true, true, false, -1, `{"dryRun":["All"],"paused":true}`},
		{"stop", false, false, true, 0, `{"gracePeriod":0}`},
		{"stop", false, false, false, 5, `{}`}, // --grace-period needs --force, as with virtctl
		{"restart", false, false, true, 0, `{"gracePeriodSeconds":0}`},
	} {
		got, err := json.Marshal(actionOptions(c.action, c.dryRun, c.paused, c.force, c.grace))
		if err != nil || string(got) != c.want {
			t.Errorf("%s dry-run=%v paused=%v force=%v grace=%d: %s (%v), want %s", c.action, c.dryRun, c.paused, c.force, c.grace, got, err, c.want)
		}
	}
}

func TestPauseArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"vm", "demo"}, true},
		{[]string{"VMI", "demo"}, true},
		{[]string{"pod", "demo"}, false},
		{[]string{"demo"}, false},
	} {
		if err := pauseArgs(nil, c.args); (err == nil) != c.ok {
			t.Errorf("pauseArgs(%v) = %v", c.args, err)
		}
	}
	got, _ := kindNameCompletion(nil)(nil, nil, "")
	if len(got) != 2 || got[0] != "vm" || got[1] != "vmi" {
		t.Errorf("completion of the kind: %v", got)
	}
}
