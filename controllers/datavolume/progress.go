package datavolume

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	"github.com/vireo-dev/vireo/importer/importerapi"
)

// progressClient reads importer Pods' progress; a Pod that does not answer quickly is skipped.
var progressClient = &http.Client{Timeout: 2 * time.Second}

// readProgress reads the importer's progress metric from its Pod.
func readProgress(ctx context.Context, pod *corev1.Pod) (cdiv1beta1.DataVolumeProgress, error) {
	url := "http://" + net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(ProgressPort)) + "/metrics"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := progressClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: HTTP %d", url, resp.StatusCode)
	}
	return parseProgress(bufio.NewScanner(resp.Body))
}

// parseProgress finds the progress metric in Prometheus text and formats it as CDI does
// ("45.23%"); without a sample (the size is not known) it is N/A.
func parseProgress(sc *bufio.Scanner) (cdiv1beta1.DataVolumeProgress, error) {
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, importerapi.ProgressMetric+"{") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return "", fmt.Errorf("progress sample %q: %w", line, err)
		}
		return cdiv1beta1.DataVolumeProgress(fmt.Sprintf("%.2f%%", v)), nil
	}
	return ProgressUnknown, sc.Err()
}
