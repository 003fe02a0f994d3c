package auth

// sortJava sorts as java.util.List.sort (TimSort) sorts fewer than 32
// elements: the leading run made ascending, then binary insertion. The
// algorithm matters because Apache's comparePolicyEntries is not a
// consistent order (compare(a, b) and compare(b, a) can both be -1): the
// same entries in another algorithm come out in another order, and the
// first decides. Longer lists (32 or more entries matching one request)
// are sorted the same way, where TimSort would merge runs.
func sortJava[T any](a []T, cmp func(x, y T) int) {
	n := len(a)
	if n < 2 {
		return
	}
	run := 1
	if cmp(a[1], a[0]) < 0 {
		run = 2
		for run < n && cmp(a[run], a[run-1]) < 0 {
			run++
		}
		for i, j := 0, run-1; i < j; i, j = i+1, j-1 {
			a[i], a[j] = a[j], a[i]
		}
	} else {
		run = 2
		for run < n && cmp(a[run], a[run-1]) >= 0 {
			run++
		}
	}
	for start := run; start < n; start++ {
		pivot := a[start]
		left, right := 0, start
		for left < right {
			mid := int(uint(left+right) >> 1)
			if cmp(pivot, a[mid]) < 0 {
				right = mid
			} else {
				left = mid + 1
			}
		}
		copy(a[left+1:start+1], a[left:start])
		a[left] = pivot
	}
}
