package calc

import "testing"

func TestMax(t *testing.T) {
	if got := Max(3, 7); got != 7 {
		t.Errorf("Max(3, 7) = %d, want 7", got)
	}
}

func TestMaxTable(t *testing.T) {
	cases := []struct {
		name    string
		a, b    int
		want    int
	}{
		{"equal", 2, 2, 2},
		{"first larger", 9, 1, 9},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Max(c.a, c.b); got != c.want {
				t.Fatalf("Max(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
			}
		})
	}
}

func TestIndexOutOfRange(t *testing.T) {
	Index([]int{1, 2}, 5)
}

func TestPasses(t *testing.T) {}

func TestSkipped(t *testing.T) {
	t.Skip("not today")
}
