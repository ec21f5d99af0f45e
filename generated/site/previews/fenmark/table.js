window.rulesdslPreviews("fenmark/table.html", {});
