package main

import (
	"bufio"
	"bytes"
	"context"
	"strconv"
	"strings"
)

// subjectAccessReviews counts the SubjectAccessReviews kube-apiserver has answered: vireo-apiserver
// delegates authorization to kube-apiserver and caches decisions per user, verb, resource and
// object name, so requests for many distinct objects cost it one review each.
func subjectAccessReviews(ctx context.Context, cl *clients) (int64, error) {
	data, err := cl.kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") || !strings.Contains(line, `resource="subjectaccessreviews"`) {
			continue
		}
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			total += int64(v)
		}
	}
	return total, sc.Err()
}
