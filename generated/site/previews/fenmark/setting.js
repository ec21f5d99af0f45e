window.rulesdslPreviews("fenmark/setting.html", {});
