window.rulesdslPreviews("fenmark/index.html", {});
