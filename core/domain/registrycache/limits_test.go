package registrycache

import (
	"strings"
	"testing"
)

// TestPagesOfALimitedList: one page more than an API server that fills its pages needs, and no more.
func TestPagesOfALimitedList(t *testing.T) {
	for _, tc := range []struct{ max, page, pages int }{
		{max: 100, page: 101, pages: 2},
		{max: 1, page: 2, pages: 2},
		{max: 499, page: 500, pages: 2},
		{max: 500, page: 500, pages: 3},
		{max: 10000, page: 500, pages: 22},
	} {
		if got := PageSize(tc.max); got != int64(tc.page) {
			t.Errorf("PageSize(%d) = %d, want %d", tc.max, got, tc.page)
		}
		if got := MaxPages(tc.max); got != tc.pages {
			t.Errorf("MaxPages(%d) = %d, want %d", tc.max, got, tc.pages)
		}
	}
}

// TestOverLimitNamesTheLimitAndItsKey: the message on the objects and in the event says which limit, how much and
// which config key sets it, and that the applied caches stay.
func TestOverLimitNamesTheLimitAndItsKey(t *testing.T) {
	l := Limits{}.OrDefaults()
	for _, o := range []*OverLimit{l.TooMany(), l.Endless(MaxPages(l.MaxConfigs)), l.TooLarge()} {
		st := o.Status(Config{Generation: 3})
		if st.State != StateError || st.ConditionStatus != "False" || st.Reason != o.Reason || st.ObservedGeneration != 3 ||
			!strings.Contains(st.Message, "registryCache.max") || !strings.Contains(st.Message, "keep working") {
			t.Errorf("status %+v", st)
		}
	}
	if !strings.Contains(l.TooMany().Detail, "100") || !strings.Contains(l.TooLarge().Detail, "262144") {
		t.Errorf("details %q, %q name no numbers", l.TooMany().Detail, l.TooLarge().Detail)
	}
}
