window.rulesdslPreviews("fenmark/kinds.html", {});
