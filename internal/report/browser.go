package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Browser returns the path of a Chromium on PATH, or "".
func Browser() string {
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	return ""
}

// probe is appended to a copy of report.html for the browser check only: it
// writes every plot image's natural size into the DOM that --dump-dom prints.
const probe = `<script>
window.addEventListener("load", function () {
  var out = [];
  document.querySelectorAll("img.plot").forEach(function (img) {
    out.push(img.alt + "=" + img.naturalWidth + "x" + img.naturalHeight);
  });
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = "PRO" + "BE[" + out.join(";") + "]";
  document.body.appendChild(pre);
});
</script>
`

// BrowserCheck is what a reader's browser makes of a report: it opens
// report.html of dir in headless Chromium, returns the size each plot image
// loaded at (title → "WxH", "0x0" when broken) and takes a screenshot
// (1200 px wide) into shot, returning the fraction of its sampled pixels that
// are not background. work is a scratch directory.
func BrowserCheck(ctx context.Context, bin, dir, work, shot string) (sizes map[string]string, inked float64, err error) {
	h, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		return nil, 0, err
	}
	probed := filepath.Join(work, "probe.html")
	if err := os.WriteFile(probed, bytes.Replace(h, []byte("</body>"), []byte(probe+"</body>"), 1), 0o644); err != nil {
		return nil, 0, err
	}
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + filepath.Join(work, "profile"), "--virtual-time-budget=5000"}
	out, err := exec.CommandContext(ctx, bin, append(flags, "--dump-dom", "file://"+probed)...).Output()
	if err != nil {
		return nil, 0, fmt.Errorf("chromium --dump-dom: %w", err)
	}
	m := regexp.MustCompile(`PROBE\[(.*?)\]`).FindSubmatch(out)
	if m == nil {
		return nil, 0, fmt.Errorf("probe did not run; DOM tail: %s", tail(out, 500))
	}
	sizes = map[string]string{}
	for _, s := range strings.Split(string(m[1]), ";") {
		name, size, _ := strings.Cut(s, "=")
		sizes[name] = size
	}
	cmd := exec.CommandContext(ctx, bin, append(flags, "--screenshot="+shot, "--window-size=1200,6000", "file://"+filepath.Join(dir, HTMLFile))...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return sizes, 0, fmt.Errorf("chromium --screenshot: %w\n%s", err, tail(out, 1000))
	}
	f, err := os.Open(shot)
	if err != nil {
		return sizes, 0, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return sizes, 0, fmt.Errorf("screenshot: %w", err)
	}
	b := img.Bounds()
	if b.Dx() != 1200 {
		return sizes, 0, errors.New("screenshot is not 1200 px wide")
	}
	n, ink := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			n++
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				ink++
			}
		}
	}
	return sizes, float64(ink) / float64(n), nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
