window.rulesdslPreviews("fenmark/changes.html", {});
